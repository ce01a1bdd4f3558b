/**
 * The MCP SDK, loaded on the first tool-server request rather than at start-up: it takes about
 * 160 ms and 25 MB to load, which a gateway that serves only REST should not pay (see
 * `npm run bench:startup`). Concurrent first requests share one load.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';

export interface McpSdk {
  McpServer: typeof McpServer;
  StreamableTransport: typeof WebStandardStreamableHTTPServerTransport;
}

let loading: Promise<McpSdk> | undefined;

export function loadMcpSdk(): Promise<McpSdk> {
  loading ??= Promise.all([
    import('@modelcontextprotocol/sdk/server/mcp.js'),
    import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
  ]).then(([server, transport]) => ({
    McpServer: server.McpServer,
    StreamableTransport: transport.WebStandardStreamableHTTPServerTransport,
  }));
  return loading;
}
