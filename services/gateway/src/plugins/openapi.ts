/**
 * OpenAPI 3.1 at /openapi.json and the docs UI at /docs, generated from the same zod schemas that
 * validate the requests (zod 4's own JSON Schema output: the input side for query strings and
 * bodies, the output side for responses). @fastify/swagger lays out the paths and parameters; the
 * responses and the shared components are put in here, from each route's `schema.response` (see
 * openapi-schemas.ts), because the plugin's own conversion cannot reference shared headers or
 * named schemas.
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import { z } from 'zod';
import { DOCS_CSP, securePage } from './console.ts';
import { BILLING_NOTE, DOCS_PAGE_OPTIONS, PRODUCT_NAME } from '../docs-page.ts';
import { NAMED_SCHEMAS, RESPONSE_HEADERS } from '../openapi-schemas.ts';

type JsonSchema = z.core.JSONSchema.BaseSchema;

const REQUEST_PARTS = ['body', 'querystring', 'params', 'headers'] as const;
const componentRef = (name: string): string => `#/components/schemas/${name}`;

const TAGS = [
  {
    name: 'email-verify',
    description:
      'Email-address verification: syntax, typos, disposable and free providers, role accounts, DNS and an SMTP conversation with ' +
      'the mail server, nothing sent. `undeliverable` only on proof; anything uncertain is `risky`.',
  },
  { name: 'qr', description: 'QR codes for text, URLs and wifi network-join codes, as an SVG image or as the module matrix.' },
  { name: 'account', description: "The caller's usage and cost this month; not metered." },
  {
    name: 'feedback',
    description:
      'Learning from sends: bounces, deliveries and complaints reported by the key (or its sending service by webhook) make later ' +
      'verifications answer from them; an address history. Free, not metered.',
  },
];

const INFO_DESCRIPTION = [
  'Batch email-address verification and QR code generation, metered per call.',
  '',
  `**${BILLING_NOTE}**`,
  '',
  'Send `Authorization: Bearer <API_KEY>` on every call. Every error is `{ "error": code, "message": text, "details"?: {...} }`.',
  'Every response of a metered route carries `X-Service-Cost` (US dollars); only successful calls cost anything, and each key has',
  'a free allowance per operation and month. The same operations are Model Context Protocol tools at `/api/mcp/email-verify`',
  'and `/api/mcp/qr`. The full reference, with prices, limits, verdict and QR rules, is `docs/api.md` in the repository.',
].join('\n');

/**
 * What a route declares per status, checked before it is written out: a response built by
 * openapi-schemas.ts, or a bare zod schema (a JSON body, documented without headers).
 */
const routeResponsesSchema = z.record(
  z.string(),
  z.union([
    z.instanceof(z.ZodType).transform((schema) => ({
      description: schema.description ?? 'Success',
      headers: [],
      content: { 'application/json': { schema } },
    })),
    z.object({
      description: z.string(),
      headers: z.array(z.enum(Object.keys(RESPONSE_HEADERS))),
      content: z.record(
        z.string(),
        z.object({
          schema: z.instanceof(z.ZodType),
          example: z.unknown().optional(),
          examples: z.record(z.string(), z.object({ summary: z.string(), value: z.unknown() })).optional(),
        }),
      ),
    }),
  ]),
);

function withoutMeta(schema: JsonSchema): JsonSchema {
  const { $schema: _schema, $id: _id, ...rest } = schema;
  return rest;
}

/** A body that takes several media types, each with its own schema (fastify's `body.content`). */
const perMediaTypeBody = z.object({ content: z.record(z.string(), z.object({ schema: z.instanceof(z.ZodType) })) });

function requestJsonSchema(schema: unknown): unknown {
  const perMediaType = perMediaTypeBody.safeParse(schema);
  if (perMediaType.success) {
    const content = Object.entries(perMediaType.data.content).map(
      ([type, media]) => [type, { schema: requestJsonSchema(media.schema) }] as const,
    );
    return { content: Object.fromEntries(content) };
  }
  if (!(schema instanceof z.ZodType)) return schema;
  return withoutMeta(z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' }));
}

function namedRegistry() {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(NAMED_SCHEMAS)) registry.add(schema, { id });
  return registry;
}

/** A response body's JSON Schema, with the named schemas it contains referenced from `components`. */
function responseJsonSchema(schema: z.ZodType): JsonSchema {
  const registry = namedRegistry();
  const name = registry.get(schema)?.id;
  if (name !== undefined) return { $ref: componentRef(name) };
  const root = '__response';
  registry.add(schema, { id: root });
  const { schemas } = z.toJSONSchema(registry, { io: 'output', unrepresentable: 'any', target: 'draft-2020-12', uri: componentRef });
  const json = schemas[root];
  if (json === undefined) throw new Error('zod produced no JSON Schema for a response');
  return withoutMeta(json);
}

function componentSchemas(): Record<string, JsonSchema> {
  const { schemas } = z.toJSONSchema(namedRegistry(), { io: 'output', unrepresentable: 'any', target: 'draft-2020-12', uri: componentRef });
  return Object.fromEntries(Object.entries(schemas).map(([name, schema]) => [name, withoutMeta(schema)]));
}

function openapiResponses(declared: unknown, route: string): Record<string, unknown> {
  const parsed = routeResponsesSchema.safeParse(declared);
  if (!parsed.success)
    throw new Error(`${route}: schema.response must be zod schemas or built with openapi-schemas.ts (${parsed.error.message})`);
  return Object.fromEntries(
    Object.entries(parsed.data).map(([status, response]) => [
      status,
      {
        description: response.description,
        headers: Object.fromEntries(response.headers.map((name) => [name, { $ref: `#/components/headers/${name}` }])),
        content: Object.fromEntries(
          Object.entries(response.content).map(([type, media]) => [type, { ...media, schema: responseJsonSchema(media.schema) }]),
        ),
      },
    ]),
  );
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const recordOf = (value: unknown): Record<string, unknown> => (isRecord(value) ? value : {});

/** Where @fastify/swagger puts a route: its method in lower case and its path with `{param}`. */
const operationKey = (method: string, url: string): string => `${method.toLowerCase()} ${url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`;

async function openapiPlugin(app: FastifyInstance, options: { version: string }): Promise<void> {
  const documentedResponses = new Map<string, Record<string, unknown>>();

  function documentRoute(route: RouteOptions, url: string): { schema: FastifySchema; url: string } {
    const { schema } = route;
    if (schema === undefined || schema.hide === true) return { schema: schema ?? {}, url };
    if (schema.response !== undefined) {
      const responses = openapiResponses(schema.response, url);
      for (const method of [route.method].flat()) documentedResponses.set(operationKey(method, url), responses);
    }
    const out: FastifySchema = { ...schema, response: undefined };
    for (const part of REQUEST_PARTS) if (schema[part] !== undefined) out[part] = requestJsonSchema(schema[part]);
    return { schema: out, url };
  }

  /** The plugin's document with each operation's responses and the shared components put in. */
  function finishDocument(generated: object): Record<string, unknown> {
    const document = recordOf(structuredClone(generated));
    for (const [path, item] of Object.entries(recordOf(document.paths))) {
      for (const [method, operation] of Object.entries(recordOf(item))) {
        const responses = documentedResponses.get(operationKey(method, path));
        if (isRecord(operation) && responses !== undefined) operation.responses = responses;
      }
    }
    document.components = { ...recordOf(document.components), schemas: componentSchemas(), headers: RESPONSE_HEADERS };
    return document;
  }

  let finished: Record<string, unknown> | undefined;
  const openapiDocument = (): Record<string, unknown> => (finished ??= finishDocument(app.swagger()));

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: PRODUCT_NAME, version: options.version, description: INFO_DESCRIPTION },
      servers: [{ url: '/', description: 'The gateway that serves this document' }],
      tags: TAGS,
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'sk_ + 32 base62 characters',
            description:
              'Your API key (`sk_` and 32 letters and digits), sent as `Authorization: Bearer <API_KEY>` (the scheme name in any case). ' +
              `Here, paste the key alone, without \`Bearer\`: this page adds the scheme. ${BILLING_NOTE}`,
          },
          basicAuth: {
            type: 'http',
            scheme: 'basic',
            description:
              'The feedback webhooks only: the API key as the password (any user name), as a sending service puts it in a webhook URL: ' +
              '`https://any:<API_KEY>@host/v1/email-verify/feedback/sendgrid`.',
          },
        },
      },
    },
    transform: ({ route, url }) => documentRoute(route, url),
  });
  // The docs UI shows the same finished document.
  await app.register(swaggerUi, {
    ...DOCS_PAGE_OPTIONS,
    routePrefix: '/docs',
    // The console's headers: a strict CSP and no framing of the page where the key is typed.
    uiHooks: {
      onRequest: (_request, reply, next) => {
        securePage(reply, DOCS_CSP);
        next();
      },
    },
    transformSpecification: openapiDocument,
    transformSpecificationClone: false,
  });
  app.get('/openapi.json', { schema: { hide: true } }, openapiDocument);
}

export default fp(openapiPlugin, { name: 'openapi' });
