/**
 * The four tools through the SDK's own client, in both modes: what they advertise, what a good
 * call answers (the REST body, or the SVG with its dimensions), and that every kind of bad
 * input or failed job comes back as an `isError` result carrying the contract's error object,
 * identical to the REST error for the same input.
 */
import { Resvg } from '@resvg/resvg-js';
import jsQRModule from 'jsqr';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { qrJobHandler } from '@svc/qr-worker';
import { scanPng } from '@svc/testkit';
import { call, startServer, type Mode, type TestServer, postBatch } from '../support/servers.ts';
import { connect, rpc, toolError, type Connected } from './mcp-client.ts';

// jsqr is CommonJS: its default export is a property of the module object under NodeNext.
const jsQR = jsQRModule.default;

function scanSvg(svg: string): string | undefined {
  const image = new Resvg(svg, { background: '#ffffff' }).render();
  return jsQR(new Uint8ClampedArray(image.pixels), image.width, image.height)?.data;
}

interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean;
  maxItems?: number;
}

describe.each<Mode>(['embedded', 'distributed'])('%s mode', (mode) => {
  let server: TestServer;
  let verify: Connected;
  let qr: Connected;
  beforeAll(async () => {
    // QR workers only: the verify tools' job errors are tested against a deployment without verify workers.
    server = await startServer(mode, { handlers: [qrJobHandler], env: { REQUEST_DEADLINE_MS: '1500' } });
    verify = await connect(server, 'email-verify');
    qr = await connect(server, 'qr');
  });
  afterAll(async () => {
    await verify?.close();
    await qr?.close();
    await server?.close();
  });

  describe('tools/list', () => {
    it('the email-verify server lists both verify tools with schemas, annotations and when to use each', async () => {
      const listed = await verify.client.listTools();
      expect(listed.tools.map((tool) => tool.name).sort()).toEqual([
        'email-verify_feedback',
        'email-verify_list-cancel',
        'email-verify_list-create',
        'email-verify_list-results',
        'email-verify_list-status',
        'email-verify_verify',
        'email-verify_verify-batch',
      ]);
      // The list tools have a test of their own (test/lists/mcp.test.ts), the feedback tool too (test/feedback).
      const tools = listed.tools.filter((tool) => !tool.name.includes('_list-') && tool.name !== 'email-verify_feedback');
      for (const tool of tools) {
        expect(tool.title).toBeTruthy();
        expect(tool.description?.length).toBeGreaterThan(100);
        expect(tool.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true, openWorldHint: true });
        expect(tool.annotations?.title).toBeTruthy();
        expect(tool.inputSchema.type).toBe('object');
        expect(tool.outputSchema?.type).toBe('object');
      }
      const batch = tools.find((tool) => tool.name === 'email-verify_verify-batch')!;
      const single = tools.find((tool) => tool.name === 'email-verify_verify')!;
      const batchInput = batch.inputSchema as JsonSchema;
      expect(batchInput.required).toEqual(['emails']);
      expect(batchInput.additionalProperties).toBe(false);
      expect(batchInput.properties?.emails).toMatchObject({ type: 'array', maxItems: 100, minItems: 1, items: { type: 'string' } });
      expect(Object.keys((batch.outputSchema as JsonSchema).properties ?? {}).sort()).toEqual(['count', 'results', 'summary']);
      expect(batch.description).toContain('email-verify_verify ');
      expect(batch.description).toMatch(/list/i);
      expect((single.inputSchema as JsonSchema).required).toEqual(['email']);
      expect((single.outputSchema as JsonSchema).required).toEqual(['email', 'score', 'verdict', 'reason', 'checks']);
      expect(single.description).toContain('email-verify_verify-batch');
    });

    it('the qr server lists qr_generate and qr_wifi: JSON-typed arguments and colours, PNG and SVG output, closed world', async () => {
      const { tools } = await qr.client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual(['qr_generate', 'qr_wifi']);
      for (const tool of tools) {
        expect(tool.title).toBeTruthy();
        expect(tool.description?.length).toBeGreaterThan(80);
        expect(tool.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true, openWorldHint: false });
        const input = tool.inputSchema as JsonSchema;
        expect(input.properties?.scale?.type).toBe('integer');
        expect(input.properties?.margin?.type).toBe('integer');
        expect(input.properties).not.toHaveProperty('format');
        const output = tool.outputSchema as JsonSchema;
        expect(Object.keys(output.properties ?? {}).sort()).toEqual(['margin', 'size', 'svg', 'version']);
        expect(output.additionalProperties).toBe(false);
      }
      const generate = tools.find((tool) => tool.name === 'qr_generate')!;
      const wifi = tools.find((tool) => tool.name === 'qr_wifi')!;
      expect((generate.inputSchema as JsonSchema).required).toEqual(['data']);
      expect(generate.description).toContain('qr_wifi');
      expect((wifi.inputSchema as JsonSchema).properties?.hidden?.type).toBe('boolean');
      expect((wifi.inputSchema as JsonSchema).required).toContain('ssid');
      expect(wifi.description).toMatch(/wi-?fi/i);
      // Colours are JSON strings: a `%23` an agent copies into JSON is an invalid colour.
      for (const tool of tools) {
        const text = JSON.stringify(tool);
        expect(text).not.toContain('%23');
        expect(tool.description).toContain('"#336699"');
        expect(tool.description).toMatch(/PNG/);
      }
    });
  });

  describe('good input', () => {
    it('qr_generate answers the SVG as structured content and as text, with its dimensions and cost', async () => {
      const data = 'https://example.com/tools?x=1';
      const result = await qr.callTool('qr_generate', { data, scale: 4, margin: 2 });
      expect(result.isError).toBeFalsy();
      const structured = result.structuredContent as { svg: string; version: number; size: number; margin: number };
      expect(structured.svg.startsWith('<svg')).toBe(true);
      expect(structured.version).toBeGreaterThanOrEqual(1);
      expect(structured.size).toBe(17 + 4 * structured.version);
      expect(structured.margin).toBe(2);
      expect(structured.svg).toContain(`width="${(structured.size + 2 * 2) * 4}"`);
      // A picture first (what chat clients show), then the markup.
      expect(result.content.map((block) => block.type)).toEqual(['image', 'text']);
      expect(result.content[0]).toMatchObject({ type: 'image', mimeType: 'image/png' });
      expect(result.content[1]).toEqual({ type: 'text', text: structured.svg });
      expect(scanSvg(structured.svg)).toBe(data);
      const image = result.content[0];
      if (image?.type === 'image') expect(scanPng(Buffer.from(image.data, 'base64'))).toBe(data);
      expect(result._meta).toEqual({ costUsd: '0', freeRemaining: expect.any(Number) });
    });

    it('qr_generate applies the REST defaults (margin 4) and the SVG equals the REST one', async () => {
      const result = await qr.callTool('qr_generate', { data: 'hello' });
      const structured = result.structuredContent as { svg: string; version: number; size: number; margin: number };
      expect(structured).toMatchObject({ version: 1, size: 21, margin: 4 });
      const rest = await call(server, '/v1/qr/qr?data=hello', { key: server.key });
      expect(structured.svg).toBe(rest.text);
    });

    it('qr_wifi encodes the escaped WIFI payload', async () => {
      const result = await qr.callTool('qr_wifi', { ssid: 'My;Net', password: 'pa:ss,word"1', hidden: true });
      expect(result.isError).toBeFalsy();
      const { svg } = result.structuredContent as { svg: string };
      expect(scanSvg(svg)).toBe('WIFI:T:WPA;S:My\\;Net;P:pa\\:ss\\,word\\"1;H:true;;');
      expect(result.content).toContainEqual({ type: 'text', text: svg });
    });
  });

  describe('bad input: isError with the contract error object, equal to REST', () => {
    const long = 'x'.repeat(801);
    it.each<[string, Record<string, unknown>, string, string]>([
      ['data over 800 characters', { data: long }, 'content_too_long', `/v1/qr/qr?data=${long}`],
      [
        'data that does not fit version 10',
        { data: 'é'.repeat(150) },
        'content_too_long',
        `/v1/qr/qr?data=${encodeURIComponent('é'.repeat(150))}`,
      ],
      ['scale out of range', { data: 'hi', scale: 99 }, 'invalid_parameter', '/v1/qr/qr?data=hi&scale=99'],
      ['margin not an integer', { data: 'hi', margin: 2.5 }, 'invalid_parameter', '/v1/qr/qr?data=hi&margin=2.5'],
      ['bad colour', { data: 'hi', dark: 'blue' }, 'invalid_parameter', '/v1/qr/qr?data=hi&dark=blue'],
      ['data missing', {}, 'invalid_parameter', '/v1/qr/qr'],
    ])('qr_generate: %s', async (_case, args, code, restPath) => {
      const result = await qr.callTool('qr_generate', args);
      expect(result.structuredContent).toBeUndefined();
      const error = toolError(result);
      expect(error.error).toBe(code);
      expect(error.message).toEqual(expect.any(String));
      const rest = await call(server, restPath, { key: server.key });
      expect(rest.status).toBe(400);
      expect(error).toEqual(rest.json());
    });

    it.each<[string, Record<string, unknown>, string]>([
      ['scale sent as a string', { data: 'hi', scale: '8' }, 'scale'],
      ['an unknown argument', { data: 'hi', format: 'json' }, 'format'],
      ['data not a string', { data: 42 }, 'data'],
    ])('qr_generate: %s is invalid_parameter naming it', async (_case, args, param) => {
      const error = toolError(await qr.callTool('qr_generate', args));
      expect(error).toMatchObject({ error: 'invalid_parameter', details: { param } });
    });

    it.each<[string, unknown]>([
      ['an array', [1]],
      ['a string', 'data=hi'],
      ['null', null],
    ])('arguments that are %s: an isError result with invalid_request, not a protocol error', async (_case, args) => {
      const response = await rpc(server, 'qr', {
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'qr_generate', arguments: args },
      });
      expect(response.status).toBe(200);
      const body = response.json() as { id: number; error?: unknown; result?: { isError?: boolean; content: Array<{ text: string }> } };
      expect(body.error).toBeUndefined();
      expect(body.id).toBe(7);
      expect(body.result?.isError).toBe(true);
      expect(JSON.parse(body.result?.content[0]?.text ?? '{}')).toEqual({
        error: 'invalid_request',
        message: 'The tool arguments must be a JSON object of the parameters the tool documents.',
      });
    });

    it('a tools/call without params or with a name that is not a string: an isError result, not a protocol error', async () => {
      for (const params of [undefined, { name: 5, arguments: { data: 'hi' } }]) {
        const response = await rpc(server, 'qr', {
          jsonrpc: '2.0',
          id: 8,
          method: 'tools/call',
          ...(params === undefined ? {} : { params }),
        });
        const body = response.json() as { error?: unknown; result?: { isError?: boolean; content: Array<{ text: string }> } };
        expect(body.error).toBeUndefined();
        expect(body.result?.isError).toBe(true);
        expect(JSON.parse(body.result?.content[0]?.text ?? '{}')).toMatchObject({
          error: 'invalid_request',
          message: expect.stringContaining('params.name'),
        });
      }
    });

    it('params of another method that do not fit it: invalid params in one sentence, never the validator text', async () => {
      const response = await rpc(server, 'qr', { jsonrpc: '2.0', id: 9, method: 'tools/list', params: { cursor: 5 } });
      expect(response.json()).toEqual({
        jsonrpc: '2.0',
        id: 9,
        error: { code: -32602, message: 'Invalid params: `params.cursor` must be a string.' },
      });
    });

    it('qr_wifi: a WPA network without password, and hidden as a string, are invalid_parameter', async () => {
      expect(toolError(await qr.callTool('qr_wifi', { ssid: 'home' }))).toMatchObject({
        error: 'invalid_parameter',
        details: { param: 'password' },
      });
      expect(toolError(await qr.callTool('qr_wifi', { ssid: 'home', password: 'secret123', hidden: 'yes' }))).toMatchObject({
        error: 'invalid_parameter',
        details: { param: 'hidden' },
      });
    });

    it.each<[string, unknown, string]>([
      ['more than 100 addresses', Array.from({ length: 101 }, (_, i) => `user${i}@example.com`), 'too_many_emails'],
      ['an empty list', [], 'invalid_request'],
      ['an entry that is not a string', ['ada@example.com', 7], 'invalid_request'],
      ['emails not an array', 'ada@example.com', 'invalid_request'],
    ])('email-verify_verify-batch: %s', async (_case, emails, code) => {
      const error = toolError(await verify.callTool('email-verify_verify-batch', { emails }));
      expect(error.error).toBe(code);
      const rest = await postBatch(server, server.key, emails);
      expect(rest.status).toBe(400);
      expect(error).toEqual(rest.json());
    });

    it('email-verify_verify-batch: the too_many_emails message is the contract one; a missing list is invalid_request', async () => {
      const tooMany = toolError(await verify.callTool('email-verify_verify-batch', { emails: Array.from({ length: 101 }, () => 'a@b.c') }));
      expect(tooMany.message).toBe('A batch may contain at most 100 addresses.');
      expect(toolError(await verify.callTool('email-verify_verify-batch', {}))).toMatchObject({
        error: 'invalid_request',
        details: { path: '$.emails' },
      });
    });

    it('email-verify_verify: a missing address or an unknown argument is invalid_parameter naming it', async () => {
      expect(toolError(await verify.callTool('email-verify_verify', {}))).toMatchObject({
        error: 'invalid_parameter',
        details: { param: 'email' },
      });
      expect(toolError(await verify.callTool('email-verify_verify', { email: 'a@b.c', deep: true }))).toMatchObject({
        error: 'invalid_parameter',
        details: { param: 'deep' },
      });
    });
  });

  describe('job errors: isError results with the contract error, HTTP 200', () => {
    // No verify worker runs here: embedded mode has no handler for the job (503), and in
    // distributed mode nobody takes it from the queue before the deadline (504).
    it('a verify call nobody can serve answers service_unavailable or timeout, no stack', async () => {
      const error = toolError(await verify.callTool('email-verify_verify', { email: 'ada@example.com' }));
      expect(error.error).toBe(mode === 'embedded' ? 'service_unavailable' : 'timeout');
      expect(JSON.stringify(error)).not.toMatch(/at .*\.ts/);
    });
  });
});
