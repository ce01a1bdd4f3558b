/**
 * The MCP SDK (v2, `@modelcontextprotocol/server`), loaded on the first tool-server request rather
 * than at start-up: it takes about 160 ms and 25 MB to load, which a gateway that serves only REST
 * should not pay (see `npm run bench:startup`). Concurrent first requests share one load.
 */
import type { McpServer, WebStandardStreamableHTTPServerTransport, createMcpHandler } from '@modelcontextprotocol/server';

export interface McpSdk {
  McpServer: typeof McpServer;
  /** The 2025 era's transport (an `initialize` handshake, then one POST per message). */
  StreamableTransport: typeof WebStandardStreamableHTTPServerTransport;
  /** The 2026-07-28 era's handler (`server/discover`, `_meta` on every request). */
  createMcpHandler: typeof createMcpHandler;
  /** The protocol versions of the 2025 era (`initialize`). */
  legacyVersions: readonly string[];
}

let loading: Promise<McpSdk> | undefined;

export function loadMcpSdk(): Promise<McpSdk> {
  loading ??= import('@modelcontextprotocol/server').then((sdk) => ({
    McpServer: sdk.McpServer,
    StreamableTransport: sdk.WebStandardStreamableHTTPServerTransport,
    createMcpHandler: sdk.createMcpHandler,
    legacyVersions: sdk.SUPPORTED_PROTOCOL_VERSIONS,
  }));
  return loading;
}
