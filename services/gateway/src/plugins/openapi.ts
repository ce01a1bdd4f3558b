/**
 * OpenAPI 3.1 at /openapi.json and the docs UI at /docs, generated from the same zod schemas
 * that validate the requests (zod 4's own JSON Schema output; input side for query strings,
 * since they are coerced from text).
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { z } from 'zod';

const SCHEMA_PARTS = ['body', 'querystring', 'params', 'headers'] as const;

function toJsonSchema(schema: unknown, io: 'input' | 'output'): unknown {
  if (!(schema instanceof z.ZodType)) return schema;
  const { $schema: _ignored, ...json } = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' });
  return json;
}

async function openapiPlugin(app: FastifyInstance, options: { version: string }): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Email verification and QR code API',
        version: options.version,
        description: 'Batch email-address verification and QR code generation, metered per call. Send `Authorization: Bearer <API_KEY>`.',
      },
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } } },
      tags: [{ name: 'email-verify' }, { name: 'qr' }, { name: 'account' }],
    },
    transform: ({ schema, url }) => {
      if (schema === undefined) return { schema, url };
      const out: Record<string, unknown> = { ...schema };
      for (const part of SCHEMA_PARTS) if (part in schema) out[part] = toJsonSchema((schema as Record<string, unknown>)[part], 'input');
      if (schema.response !== undefined) {
        out.response = Object.fromEntries(
          Object.entries(schema.response as Record<string, unknown>).map(([status, body]) => [status, toJsonSchema(body, 'output')]),
        );
      }
      return { schema: out, url };
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, () => app.swagger());
}

export default fp(openapiPlugin, { name: 'openapi' });
