/**
 * The SDK's own client against a listening gateway, with the HTTP answers of its requests kept
 * so that tests can read headers (cost, rate limits) the protocol layer does not expose.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { generateApiKey } from '@svc/gateway';
import type { OperationId } from '@svc/contracts';
import { call, type TestServer } from '../support/servers.ts';

export type ToolServerName = 'email-verify' | 'qr';

export interface Connected {
  client: Client;
  /** Headers of the last HTTP answer to a POST of the transport. */
  lastHeaders(): Headers;
  callTool(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  close(): Promise<void>;
}

export function transportFor(
  server: TestServer,
  name: ToolServerName,
  key: string | null,
  seen: Response[] = [],
): StreamableHTTPClientTransport {
  return new StreamableHTTPClientTransport(new URL(`${server.baseUrl}/api/mcp/${name}`), {
    requestInit: key === null ? {} : { headers: { Authorization: `Bearer ${key}` } },
    fetch: async (url, init) => {
      const response = await fetch(url, init);
      // The client's GET for an event stream (answered 405) may land at any time; keep POSTs only.
      if (init?.method === 'POST') seen.push(response);
      return response;
    },
  });
}

export async function connect(server: TestServer, name: ToolServerName, key: string | null = server.key): Promise<Connected> {
  const seen: Response[] = [];
  const client = new Client({ name: 'test-agent', version: '1.0.0' });
  await client.connect(transportFor(server, name, key, seen));
  return {
    client,
    lastHeaders: () => {
      const last = seen.at(-1);
      if (last === undefined) throw new Error('no response yet');
      return last.headers;
    },
    callTool: async (tool, args = {}) => (await client.callTool({ name: tool, arguments: args })) as CallToolResult,
    close: () => client.close(),
  };
}

/** A key of its own, so that a test's rate-limit budget and meter start from zero. */
export async function freshKey(server: TestServer, freeAllowance: Partial<Record<OperationId, number>> = {}): Promise<string> {
  const key = generateApiKey();
  await server.keys.create(`mcp-test-${key.slice(-6)}`, key, freeAllowance);
  return key;
}

/** A JSON-RPC POST without the SDK, as any HTTP client would send it. */
export function rpc(server: TestServer, name: ToolServerName, body: unknown, key: string | null = server.key) {
  return call(server, `/api/mcp/${name}`, {
    method: 'POST',
    key,
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify(body),
  });
}

export const toolCall = (name: string, args: Record<string, unknown>, id = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

/** The error object a failed tool call carries as its text content. */
export function toolError(result: CallToolResult): { error: string; message: string; details?: Record<string, unknown> } {
  const first = result.content[0];
  if (result.isError !== true || first?.type !== 'text') throw new Error(`not a tool error: ${JSON.stringify(result)}`);
  return JSON.parse(first.text) as { error: string; message: string; details?: Record<string, unknown> };
}
