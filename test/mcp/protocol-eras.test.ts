/**
 * Both protocol eras on the same endpoints, with today's real clients: the v2 SDK client pinned
 * to 2026-07-28, in auto mode (it must negotiate 2026-07-28, not fall back), in its default 2025
 * mode, and the v1 SDK client. Each lists and runs every tool of both servers: advertised schemas
 * are valid JSON Schema 2020-12 without type arrays, structured results validate against the
 * output schemas, the QR image scans to the data, input problems are `isError` results with the
 * contract's error object, and a metered call carries `_meta.costUsd`. A 2026 request naming a
 * version the servers do not speak gets the specification's JSON-RPC error.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scanPng, startMailRig, type MailRig } from '@svc/testkit';
import { startServer, type TestServer } from '../support/servers.ts';
import { toolError } from './mcp-client.ts';
import { CLIENT_KINDS, connectAs, modernRpc, type ClientKind, type EraClient } from './eras.ts';

const NEGOTIATED: Record<ClientKind, string> = {
  'v2 pinned 2026-07-28': '2026-07-28',
  'v2 auto': '2026-07-28',
  'v2 default': '2025-11-25',
  v1: '2025-11-25',
};

const TOOLS = {
  'email-verify': [
    'email-verify_verify-batch',
    'email-verify_verify',
    'email-verify_list-create',
    'email-verify_list-status',
    'email-verify_list-results',
    'email-verify_list-cancel',
    'email-verify_feedback',
  ],
  qr: ['qr_generate', 'qr_wifi'],
} as const;

/** Every `type` in a schema, wherever it is, that is an array. */
function typeArrays(schema: unknown, path = '#'): string[] {
  if (Array.isArray(schema)) return schema.flatMap((item, index) => typeArrays(item, `${path}/${index}`));
  if (typeof schema !== 'object' || schema === null) return [];
  const own = 'type' in schema && Array.isArray(schema.type) ? [path] : [];
  return own.concat(Object.entries(schema).flatMap(([key, value]) => typeArrays(value, `${path}/${key}`)));
}

let rig: MailRig;
let server: TestServer;
beforeAll(async () => {
  rig = await startMailRig('eras.test', '127.0.0.32', ['ada@eras.test']);
  server = await startServer('embedded', { env: { ...rig.env, RATE_LIMIT_QR_GENERATE: '0', RATE_LIMIT_QR_WIFI: '0' } });
});
afterAll(async () => {
  await server?.close();
  await rig?.close();
});

describe.each(CLIENT_KINDS)('%s client', (kind) => {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  let verify: EraClient;
  let qr: EraClient;
  beforeAll(async () => {
    verify = await connectAs(kind, server, 'email-verify');
    qr = await connectAs(kind, server, 'qr');
  });
  afterAll(async () => {
    await verify?.close();
    await qr?.close();
  });

  it(`negotiates ${NEGOTIATED[kind]} with both servers`, () => {
    expect(verify.version).toBe(NEGOTIATED[kind]);
    expect(qr.version).toBe(NEGOTIATED[kind]);
  });

  it.each(['email-verify', 'qr'] as const)('%s: lists its tools with portable, valid 2020-12 schemas', async (name) => {
    const tools = await (name === 'qr' ? qr : verify).listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([...TOOLS[name]].sort());
    for (const tool of tools) {
      for (const schema of [tool.inputSchema, tool.outputSchema]) {
        expect(schema, tool.name).toBeDefined();
        expect(typeArrays(schema), tool.name).toEqual([]);
        expect(() => ajv.compile(schema as object), tool.name).not.toThrow();
      }
    }
  });

  /** The result of a call, its structured content checked against the tool's advertised output schema. */
  async function run(client: EraClient, tool: string, args: Record<string, unknown>) {
    const result = await client.callTool(tool, args);
    expect(result.isError, JSON.stringify(result.content).slice(0, 300)).toBeFalsy();
    const listed = (await client.listTools()).find((candidate) => candidate.name === tool);
    const validate = ajv.compile(listed?.outputSchema as object);
    expect(validate(result.structuredContent), JSON.stringify(validate.errors)).toBe(true);
    return result;
  }

  it('qr_generate and qr_wifi: a PNG that scans to the data, the SVG as text, the cost in _meta', async () => {
    const generated = await run(qr, 'qr_generate', { data: `eras ${kind}`, dark: '#1a237e', scale: 4 });
    const [image, text] = generated.content;
    if (image?.type !== 'image') throw new Error('the first block is not an image');
    expect(scanPng(Buffer.from(image.data, 'base64'))).toBe(`eras ${kind}`);
    expect(text).toMatchObject({ type: 'text', text: expect.stringMatching(/^<svg/) });
    expect(generated._meta).toMatchObject({ costUsd: expect.stringMatching(/^\d+(\.\d+)?$/) });

    const wifi = await run(qr, 'qr_wifi', { ssid: 'eras', password: 'secret123' });
    const [wifiImage] = wifi.content;
    if (wifiImage?.type !== 'image') throw new Error('the first block is not an image');
    expect(scanPng(Buffer.from(wifiImage.data, 'base64'))).toMatch(/^WIFI:T:WPA;S:eras;P:secret123;/);
  });

  it('the verify tools probe the mail world and answer the REST shapes', async () => {
    const batch = await run(verify, 'email-verify_verify-batch', { emails: ['ada@eras.test', 'nobody@eras.test', 'not an address'] });
    expect((batch.structuredContent as { summary: unknown }).summary).toEqual({ deliverable: 1, risky: 0, undeliverable: 2 });
    expect(batch._meta).toMatchObject({ costUsd: expect.any(String) });
    const single = await run(verify, 'email-verify_verify', { email: 'ada@eras.test' });
    expect(single.structuredContent).toMatchObject({ verdict: 'deliverable', reason: 'accepted_email' });
  });

  it('the list tools create, follow, page and cancel a list', async () => {
    const created = await run(verify, 'email-verify_list-create', { emails: ['not an address', 'also bad'], name: kind });
    const { id } = created.structuredContent as { id: string };
    await expect
      .poll(async () => ((await run(verify, 'email-verify_list-status', { id })).structuredContent as { status: string }).status, {
        timeout: 15_000,
      })
      .toBe('completed');
    const status = await run(verify, 'email-verify_list-status', { id });
    // After the list object, a sentence says what to do next (ask again later, or read the results).
    expect(status.content[1]).toMatchObject({ type: 'text', text: expect.stringContaining('email-verify_list-results') });
    const page = await run(verify, 'email-verify_list-results', { id });
    expect((page.structuredContent as { results: unknown[] }).results).toHaveLength(2);
    const cancelled = await verify.callTool('email-verify_list-cancel', { id });
    expect(cancelled.isError).toBeFalsy();
  });

  it('input problems are isError results with the contract’s error object', async () => {
    expect(toolError(await qr.callTool('qr_generate', { data: 'x', scale: 0 }))).toMatchObject({ error: 'invalid_parameter' });
    expect(toolError(await qr.callTool('qr_generate', { data: 'x', colour: 'red' }))).toMatchObject({ error: 'invalid_parameter' });
    expect(toolError(await verify.callTool('email-verify_verify-batch', { emails: [] })).error).toMatch(/invalid|too_many/);
    expect(toolError(await qr.callTool('no_such_tool', {}))).toMatchObject({ error: 'not_found' });
  });
});

describe('2026-07-28 refusals are JSON-RPC errors', () => {
  it('an unsupported version: 400, -32022 naming the versions served', async () => {
    const response = await modernRpc(server, 'qr', { method: 'tools/list' }, { version: '2099-01-01' });
    expect(response.status).toBe(400);
    expect(response.json()).toMatchObject({
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32022, data: { supported: ['2026-07-28'], requested: '2099-01-01' } },
    });
  });

  it('a bad envelope (the Mcp-Method header disagreeing with the body) is a JSON-RPC error too', async () => {
    const response = await modernRpc(server, 'qr', { method: 'tools/list' }, { headers: { 'mcp-method': 'tools/call' } });
    expect(response.status).toBe(400);
    expect(response.json()).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number), message: expect.any(String) } });
  });

  it('a refused key is 401 with its challenge, in the contract’s format', async () => {
    const response = await modernRpc(server, 'qr', { method: 'server/discover' }, { key: server.revokedKey });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm="api"/);
    expect(response.json()).toMatchObject({ error: 'unauthorized' });
  });

  it('server/discover advertises tools without listChanged (no subscriptions/listen stream)', async () => {
    const response = await modernRpc(server, 'qr', { method: 'server/discover' });
    expect(response.status).toBe(200);
    const body = response.json() as { result: { supportedVersions: string[]; capabilities: { tools: { listChanged?: boolean } } } };
    expect(body.result.supportedVersions).toEqual(['2026-07-28']);
    expect(body.result.capabilities.tools.listChanged).not.toBe(true);
  });
});
