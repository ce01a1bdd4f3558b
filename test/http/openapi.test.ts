/**
 * OpenAPI 3.1 is generated from the zod schemas that validate the requests, and says what a client
 * generator needs: operation ids, servers, tags, true media types, typed parameters with their
 * ranges and patterns, every error status with the error schema, the response headers, and
 * examples that are real answers. The docs UI serves the same document.
 */
import { normaliseColour } from '@svc/contracts';
import { scanModules, scanSvg } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startServer, type TestServer } from '../support/servers.ts';

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema: { type?: string; minimum?: number; maximum?: number; default?: unknown; pattern?: string; enum?: unknown[] };
}
interface Media {
  schema: { $ref?: string; type?: string };
  example?: unknown;
}
interface Response {
  description: string;
  headers?: Record<string, { $ref: string }>;
  content: Record<string, Media>;
}
interface Operation {
  operationId?: string;
  tags?: string[];
  parameters?: Parameter[];
  requestBody?: {
    content: Record<
      string,
      { schema: { type?: string; properties: Record<string, { maxItems?: number; minItems?: number }> }; example?: unknown }
    >;
  };
  security?: unknown[];
  responses: Record<string, Response>;
}
interface Document {
  openapi: string;
  servers: Array<{ url: string }>;
  tags: Array<{ name: string; description?: string }>;
  paths: Record<string, Record<string, Operation>>;
  components: {
    securitySchemes: Record<string, { type: string; scheme: string }>;
    schemas: Record<string, unknown>;
    headers: Record<string, unknown>;
  };
}

const JOB_ERRORS = ['400', '401', '405', '429', '431', '500', '503', '504'];

describe('OpenAPI and docs', () => {
  let server: TestServer;
  let spec: Document;
  const operation = (path: string, method = 'get'): Operation => spec.paths[path]![method]!;
  const parameter = (path: string, name: string): Parameter => operation(path).parameters!.find((param) => param.name === name)!;

  beforeAll(async () => {
    server = await startServer('embedded');
    spec = (await call(server, '/openapi.json')).json() as Document;
  });
  afterAll(async () => server.close());

  it('is OpenAPI 3.1 with servers, described tags, bearer security and a unique operationId per operation', () => {
    expect(spec.openapi).toBe('3.1.0');
    expect(spec.servers).toEqual([expect.objectContaining({ url: '/' })]);
    expect(spec.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(Object.keys(spec.paths).sort()).toEqual([
      '/v1/email-verify/feedback',
      '/v1/email-verify/feedback/{source}',
      '/v1/email-verify/history',
      '/v1/email-verify/lists',
      '/v1/email-verify/lists/{id}',
      '/v1/email-verify/lists/{id}/finish',
      '/v1/email-verify/lists/{id}/results',
      '/v1/email-verify/verify',
      '/v1/email-verify/verify/batch',
      '/v1/qr/qr',
      '/v1/qr/wifi',
      '/v1/usage',
    ]);
    const operations = Object.values(spec.paths).flatMap((item) => Object.values(item));
    expect(operations.map((op) => op.operationId).sort()).toEqual([
      'cancelList',
      'createList',
      'finishList',
      'generateQrCode',
      'generateWifiQrCode',
      'getAddressHistory',
      'getList',
      'getListResults',
      'getUsage',
      'listLists',
      'reportFeedback',
      'reportFeedbackWebhook',
      'verifyEmail',
      'verifyEmailBatch',
    ]);
    expect(spec.components.securitySchemes.basicAuth).toMatchObject({ type: 'http', scheme: 'basic' });
    for (const op of operations) {
      // The feedback webhooks also take the key as a Basic password (what sending services can send).
      const webhook = op.operationId === 'reportFeedback' || op.operationId === 'reportFeedbackWebhook';
      expect(op.security).toEqual(webhook ? [{ bearerAuth: [] }, { basicAuth: [] }] : [{ bearerAuth: [] }]);
      for (const tag of op.tags ?? []) expect(spec.tags.find((known) => known.name === tag)?.description).toBeTruthy();
    }
  });

  it('QR success is an SVG image or the JSON module matrix, not a JSON string', () => {
    const content = operation('/v1/qr/qr').responses['200']!.content;
    expect(Object.keys(content).sort()).toEqual(['application/json', 'image/svg+xml']);
    expect(content['image/svg+xml']!.schema.type).toBe('string');
    expect(content['application/json']!.schema).toEqual({ $ref: '#/components/schemas/QrMatrix' });
    expect(spec.components.schemas.QrMatrix).toMatchObject({ required: ['version', 'ecc', 'size', 'margin', 'modules'] });
  });

  it('query parameters are typed as the values they stand for, with ranges, patterns, enums and defaults', () => {
    expect(parameter('/v1/qr/qr', 'scale').schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 40, default: 8 });
    expect(parameter('/v1/qr/qr', 'margin').schema).toMatchObject({ type: 'integer', minimum: 0, maximum: 20, default: 4 });
    expect(parameter('/v1/qr/qr', 'format').schema).toMatchObject({ enum: ['svg', 'json'], default: 'svg' });
    expect(parameter('/v1/qr/qr', 'data')).toMatchObject({ required: true, schema: { type: 'string', minLength: 1, maxLength: 800 } });
    expect(parameter('/v1/qr/wifi', 'hidden').schema).toMatchObject({ type: 'boolean', default: false });
    expect(parameter('/v1/qr/wifi', 'security').schema).toMatchObject({ enum: ['WPA', 'WEP', 'nopass'], default: 'WPA' });
    // The enum gives the spellings written; the description says what else is read.
    expect(JSON.stringify(parameter('/v1/qr/wifi', 'security'))).toContain('WPA2 is accepted and written as WPA');
    expect(parameter('/v1/email-verify/verify', 'email').required).toBe(true);
    const emails = operation('/v1/email-verify/verify/batch', 'post').requestBody!.content['application/json']!.schema.properties.emails!;
    expect(emails).toMatchObject({ minItems: 1, maxItems: 100 });
  });

  it('the colour pattern accepts exactly what the validator accepts', () => {
    for (const path of ['/v1/qr/qr', '/v1/qr/wifi']) {
      for (const name of ['dark', 'light']) {
        const { pattern, default: fallback } = parameter(path, name).schema;
        const documented = new RegExp(pattern!);
        for (const sample of [
          '000',
          '#ABC',
          'abcd',
          '#A1B2C3',
          'a1b2c3d4',
          '',
          '#',
          '12',
          '12345',
          '#1234567',
          'ggg',
          'red',
          ' #000',
          '#000"/>',
        ]) {
          expect(documented.test(sample), sample).toBe(normaliseColour(sample) !== undefined);
        }
        expect(normaliseColour(String(fallback))).toBeDefined();
      }
    }
  });

  it('documents every error status a route answers, each with the error schema', () => {
    const routes: Array<[string, string, string[]]> = [
      ['/v1/qr/qr', 'get', JOB_ERRORS],
      ['/v1/qr/wifi', 'get', JOB_ERRORS],
      ['/v1/email-verify/verify', 'get', JOB_ERRORS],
      ['/v1/email-verify/verify/batch', 'post', [...JOB_ERRORS, '413', '415']],
      ['/v1/usage', 'get', ['401', '405', '431', '500', '503']],
      ['/v1/email-verify/lists', 'post', ['400', '401', '405', '413', '415', '429', '431', '500', '503']],
      ['/v1/email-verify/lists', 'get', ['400', '401', '405', '431', '500', '503']],
      ['/v1/email-verify/lists/{id}', 'get', ['401', '404', '405', '431', '500', '503']],
      ['/v1/email-verify/lists/{id}/results', 'get', ['400', '401', '404', '405', '431', '500', '503']],
      ['/v1/email-verify/lists/{id}', 'delete', ['401', '404', '405', '431', '500', '503']],
      ['/v1/email-verify/feedback', 'post', ['400', '401', '405', '429', '431', '500', '503']],
      ['/v1/email-verify/feedback/{source}', 'post', ['400', '401', '404', '405', '429', '431', '500', '503']],
      ['/v1/email-verify/history', 'get', ['400', '401', '405', '431', '500', '503']],
    ];
    for (const [path, method, errors] of routes) {
      const responses = operation(path, method).responses;
      const success = path === '/v1/email-verify/lists' && method === 'post' ? '202' : '200';
      expect(Object.keys(responses).sort(), path).toEqual([success, ...errors].sort());
      for (const status of errors) {
        expect(responses[status]!.content['application/json']!.schema, `${path} ${status}`).toEqual({ $ref: '#/components/schemas/Error' });
      }
    }
  });

  it('documents the response headers: cost, allowance and rate limits on metered routes, the challenge, Allow and Retry-After', () => {
    const headers = (path: string, status: string, method = 'get') => Object.keys(operation(path, method).responses[status]!.headers ?? {});
    const rateLimit = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'];
    expect(headers('/v1/qr/qr', '200')).toEqual(
      expect.arrayContaining(['X-Request-Id', 'X-Service-Cost', 'X-Service-Free-Remaining', ...rateLimit]),
    );
    expect(headers('/v1/qr/qr', '400')).toEqual(expect.arrayContaining(['X-Request-Id', 'X-Service-Cost', ...rateLimit]));
    expect(headers('/v1/qr/qr', '400')).not.toContain('X-Service-Free-Remaining');
    expect(headers('/v1/email-verify/verify/batch', '401', 'post')).toEqual(expect.arrayContaining(['WWW-Authenticate', 'X-Service-Cost']));
    expect(headers('/v1/email-verify/verify', '405')).toContain('Allow');
    expect(headers('/v1/qr/wifi', '429')).toContain('Retry-After');
    expect(headers('/v1/qr/wifi', '503')).toContain('Retry-After');
    expect(headers('/v1/usage', '200')).toEqual(['X-Request-Id']);
    expect(headers('/v1/email-verify/lists', '202', 'post')).toEqual(
      expect.arrayContaining(['Location', 'X-Service-Cost', 'X-Service-Free-Remaining', ...rateLimit]),
    );
    expect(headers('/v1/email-verify/lists/{id}/results', '200')).toEqual([
      'X-Request-Id',
      'X-List-Status',
      'X-List-Pending',
      'Content-Disposition',
    ]);
    expect(headers('/v1/email-verify/lists/{id}', '200')).toEqual(['X-Request-Id']);
    const lists = ['Location', 'X-List-Status', 'X-List-Pending', 'Content-Disposition'];
    expect(Object.keys(spec.components.headers).sort()).toEqual(
      [
        'Allow',
        'Retry-After',
        'WWW-Authenticate',
        'X-Request-Id',
        'X-Service-Cost',
        'X-Service-Free-Remaining',
        ...rateLimit,
        ...lists,
      ].sort(),
    );
  });

  it('lists: uploads as JSON, CSV or a workbook, results as JSON or CSV, the list object by name', () => {
    const create = operation('/v1/email-verify/lists', 'post');
    expect(Object.keys(create.requestBody!.content).sort()).toEqual([
      'application/csv',
      'application/json',
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
      'text/csv',
    ]);
    expect(create.requestBody!.content['text/csv']!.schema.type).toBe('string');
    expect(create.requestBody!.content['application/json']!.schema.properties.emails).toMatchObject({ minItems: 1, maxItems: 100000 });
    expect(create.responses['202']!.content['application/json']!.schema).toEqual({ $ref: '#/components/schemas/List' });
    const results = operation('/v1/email-verify/lists/{id}/results').responses['200']!.content;
    expect(Object.keys(results).sort()).toEqual(['application/json', 'text/csv']);
    expect(results['text/csv']!.schema.type).toBe('string');
    expect(results['application/json']!.schema).toEqual({ $ref: '#/components/schemas/ListResults' });
    expect(parameter('/v1/email-verify/lists/{id}/results', 'format').schema).toMatchObject({ enum: ['json', 'csv'], default: 'json' });
    expect(parameter('/v1/email-verify/lists/{id}', 'id')).toMatchObject({ in: 'path', required: true });
  });

  it('the QR examples are real codes that scan to their data', () => {
    const content = operation('/v1/qr/qr').responses['200']!.content;
    expect(scanSvg(String(content['image/svg+xml']!.example))).toBe('hello');
    const matrix = content['application/json']!.example as { modules: number[][]; size: number };
    expect(matrix.modules).toHaveLength(matrix.size);
    expect(scanModules(matrix.modules)).toBe('hello');
  });

  it('serves the interactive docs at /docs, showing the same document', async () => {
    const docs = await call(server, '/docs');
    expect([200, 302]).toContain(docs.status);
    const page = await call(server, '/docs/static/index.html');
    expect(page.status).toBe(200);
    expect(page.text).toContain('swagger');
    expect((await call(server, '/docs/json')).json()).toEqual(spec);
  });
});
