/**
 * The clients of both protocol eras against a listening gateway: the v2 SDK client
 * (`@modelcontextprotocol/client`) pinned to 2026-07-28, in auto mode (it probes with
 * `server/discover`) or in its default 2025 mode, and the v1 SDK client (`@modelcontextprotocol/sdk`,
 * 2025 only); plus a raw 2026-07-28 request as any HTTP client would send it.
 */
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { call, type TestServer } from '../support/servers.ts';
import type { ToolServerName } from './mcp-client.ts';

export type ClientKind = 'v2 pinned 2026-07-28' | 'v2 auto' | 'v2 default' | 'v1';
export const CLIENT_KINDS: readonly ClientKind[] = ['v2 pinned 2026-07-28', 'v2 auto', 'v2 default', 'v1'];

export interface EraClient {
  /** The protocol version the connection negotiated. */
  version: string | undefined;
  listTools(): Promise<Array<{ name: string; inputSchema: unknown; outputSchema?: unknown }>>;
  callTool(
    name: string,
    args: Record<string, unknown>,
    onprogress?: (progress: { progress: number; total?: number }) => void,
    /** Aborting it cancels the call, as a user stopping an agent does. */
    signal?: AbortSignal,
  ): Promise<CallToolResult>;
  close(): Promise<void>;
}

const MODES = {
  'v2 pinned 2026-07-28': { pin: '2026-07-28' },
  'v2 auto': 'auto',
  'v2 default': 'legacy',
} as const;

export async function connectAs(
  kind: ClientKind,
  // Any listening gateway: a test server, or the product run as processes (test/lists/products.ts).
  server: Pick<TestServer, 'baseUrl' | 'key'>,
  name: ToolServerName,
  options: { key?: string; headers?: Record<string, string> } = {},
): Promise<EraClient> {
  const headers = { Authorization: `Bearer ${options.key ?? server.key}`, ...options.headers };
  const url = new URL(`${server.baseUrl}/api/mcp/${name}`);
  if (kind === 'v1') {
    const client = new V1Client({ name: 'test-agent-v1', version: '1.0.0' });
    const transport = new V1Transport(url, { requestInit: { headers } });
    await client.connect(transport);
    return {
      version: transport.protocolVersion,
      listTools: async () => (await client.listTools()).tools,
      callTool: async (tool, args, onprogress, signal) =>
        (await client.callTool({ name: tool, arguments: args }, undefined, requestOptions(onprogress, signal))) as CallToolResult,
      close: () => client.close(),
    };
  }
  const client = new V2Client({ name: 'test-agent-v2', version: '1.0.0' }, { versionNegotiation: { mode: MODES[kind] } });
  await client.connect(new V2Transport(url, { requestInit: { headers } }));
  return {
    version: client.getNegotiatedProtocolVersion(),
    listTools: async () => (await client.listTools()).tools,
    callTool: async (tool, args, onprogress, signal) =>
      (await client.callTool({ name: tool, arguments: args }, requestOptions(onprogress, signal))) as unknown as CallToolResult,
    close: () => client.close(),
  };
}

/** The request options both SDKs take: only what was given. */
function requestOptions(
  onprogress: ((progress: { progress: number; total?: number }) => void) | undefined,
  signal: AbortSignal | undefined,
): { onprogress?: (progress: { progress: number; total?: number }) => void; signal?: AbortSignal } {
  return { ...(onprogress === undefined ? {} : { onprogress }), ...(signal === undefined ? {} : { signal }) };
}

export const MODERN_VERSION = '2026-07-28';

/** A raw 2026-07-28 request: the envelope in `_meta` and the standard headers. */
export function modernRpc(
  server: TestServer,
  name: ToolServerName,
  message: { id?: number; method: string; params?: Record<string, unknown> },
  options: { key?: string | null; version?: string; headers?: Record<string, string> } = {},
) {
  const version = options.version ?? MODERN_VERSION;
  const params = {
    ...message.params,
    _meta: {
      'io.modelcontextprotocol/protocolVersion': version,
      'io.modelcontextprotocol/clientCapabilities': {},
      'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
    },
  };
  const toolName: Record<string, string> = typeof message.params?.name === 'string' ? { 'mcp-name': message.params.name } : {};
  return call(server, `/api/mcp/${name}`, {
    method: 'POST',
    key: options.key === undefined ? server.key : options.key,
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': version,
      'mcp-method': message.method,
      ...toolName,
      ...options.headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: message.id ?? 1, method: message.method, params }),
  });
}
