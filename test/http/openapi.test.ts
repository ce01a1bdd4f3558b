/** OpenAPI 3.1 is generated from the zod schemas that validate the requests, and the docs UI is served. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startServer, type TestServer } from '../support/servers.ts';

interface Operation {
  parameters?: Array<{ name: string; in: string; required?: boolean; schema: Record<string, unknown> }>;
  requestBody?: { content: Record<string, { schema: { properties: Record<string, { maxItems?: number; minItems?: number }> } }> };
  security?: unknown[];
  responses: Record<string, unknown>;
}

describe('OpenAPI and docs', () => {
  let server: TestServer;
  let spec: { openapi: string; paths: Record<string, Record<string, Operation>>; components: { securitySchemes: Record<string, unknown> } };
  beforeAll(async () => {
    server = await startServer('embedded');
    spec = (await call(server, '/openapi.json')).json() as typeof spec;
  });
  afterAll(async () => server.close());

  it('is OpenAPI 3.1 with bearer security on the metered routes', () => {
    expect(spec.openapi).toBe('3.1.0');
    expect(spec.components.securitySchemes.bearerAuth).toEqual({ type: 'http', scheme: 'bearer' });
    expect(Object.keys(spec.paths).sort()).toEqual([
      '/v1/email-verify/lists',
      '/v1/email-verify/lists/{id}',
      '/v1/email-verify/lists/{id}/results',
      '/v1/email-verify/verify',
      '/v1/email-verify/verify/batch',
      '/v1/qr/qr',
      '/v1/qr/wifi',
      '/v1/usage',
    ]);
    expect(spec.paths['/v1/qr/qr']!.get!.security).toEqual([{ bearerAuth: [] }]);
  });

  it('documents the same limits the validators enforce', () => {
    const batch = spec.paths['/v1/email-verify/verify/batch']!.post!;
    const emails = batch.requestBody!.content['application/json']!.schema.properties.emails!;
    expect(emails).toMatchObject({ minItems: 1, maxItems: 100 });
    const params = spec.paths['/v1/qr/qr']!.get!.parameters!;
    expect(params.map((param) => param.name).sort()).toEqual(['dark', 'data', 'format', 'light', 'margin', 'scale']);
    expect(params.find((param) => param.name === 'data')?.required).toBe(true);
    expect(Object.keys(spec.paths['/v1/qr/qr']!.get!.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '429']));
  });

  it('serves the interactive docs at /docs', async () => {
    const docs = await call(server, '/docs');
    expect([200, 302]).toContain(docs.status);
    const page = await call(server, '/docs/static/index.html');
    expect(page.status).toBe(200);
    expect(page.text).toContain('swagger');
  });
});
