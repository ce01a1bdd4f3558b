/**
 * The tool servers over stateless Streamable HTTP (`POST /api/mcp/email-verify`, `POST /api/mcp/qr`).
 * Everything the REST routes get from the gateway happens before the SDK sees the request:
 * the key check (401 with its challenge), the operation of a `tools/call` and its rate limit
 * (a 429 in the contract's format with Retry-After, the budget shared with REST). Only then is
 * the raw response handed to a fresh server and transport; a successful tool call is metered
 * inside the tool, which writes the cost headers before the SDK writes its answer.
 */
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ListService } from '../lists/list-service.ts';
import type { JobRunner } from '../operation.ts';
import { requireKey } from '../plugins/auth.ts';
import { toApiError } from '../plugins/errors.ts';
import { COST_HEADER } from '../plugins/metering.ts';
import { TOOL_SERVERS, createToolServer, type ToolServerDef } from './servers.ts';
import { toolCallOperation } from './tool-call.ts';
import type { ToolContext } from './tool-result.ts';

/** The SDK's stateless example answers GET (no server-sent event stream) and DELETE (no session) so. */
const METHOD_NOT_ALLOWED = { jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null } as const;

/** Fastify writes its headers only when it sends; a hijacked reply needs them on the raw response. */
function copyHeadersToRaw(reply: FastifyReply): void {
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value);
}

async function serve(
  app: FastifyInstance,
  runner: JobRunner,
  lists: ListService,
  definition: ToolServerDef,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  const context: ToolContext = {
    runner,
    key: request.identity.key!,
    lists,
    requestId: request.id,
    log: request.log,
    charge: async (operation) => {
      const charged = await app.charge(request, reply, operation);
      copyHeadersToRaw(reply);
      return charged;
    },
  };
  const server = createToolServer(definition, context);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  reply.hijack();
  reply.header(COST_HEADER, '0');
  copyHeadersToRaw(reply);
  reply.raw.on('close', () => {
    void transport.close();
    void server.close();
  });
  try {
    await server.connect(transport);
    // The body is parsed already (JSON only, 64 KiB); null lets the SDK answer a missing one.
    await transport.handleRequest(request.raw, reply.raw, request.body ?? null);
  } catch (error) {
    // The SDK answers protocol problems itself; reaching here is a bug, answered as REST would.
    request.log.error({ err: error }, 'tool server failed');
    if (!reply.raw.headersSent) {
      reply.raw.writeHead(500, { 'Content-Type': 'application/json; charset=utf-8' });
      reply.raw.end(JSON.stringify(toApiError(error instanceof Error ? error : new Error(String(error)), request.id).toBody()));
    }
  }
}

export function mcpRoutes(app: FastifyInstance, options: { runner: JobRunner; lists: ListService }, done: (error?: Error) => void): void {
  // Like every metered route, each answer carries its cost: 401, 429 and the free methods cost 0.
  app.addHook('onSend', async (_request, reply, payload) => {
    if (!reply.hasHeader(COST_HEADER)) reply.header(COST_HEADER, '0');
    return payload;
  });

  for (const definition of TOOL_SERVERS) {
    const url = `/api/mcp/${definition.name}`;
    app.post(
      url,
      {
        schema: { hide: true },
        onRequest: requireKey,
        preHandler: async (request, reply) => {
          const operation = toolCallOperation(request.body, definition.operations);
          if (operation === undefined) return;
          request.operation = operation;
          await app.limiters[operation]?.(request, reply);
        },
      },
      (request, reply) => serve(app, options.runner, options.lists, definition, request, reply),
    );
    app.route({
      method: ['GET', 'DELETE'],
      url,
      schema: { hide: true },
      handler: async (_request, reply) => reply.code(405).header('Allow', 'POST').type('application/json').send(METHOD_NOT_ALLOWED),
    });
  }
  done();
}
