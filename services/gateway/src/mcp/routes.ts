/**
 * The tool servers over stateless Streamable HTTP (`POST /api/mcp/email-verify`, `POST /api/mcp/qr`).
 * Everything the REST routes get from the gateway happens before the SDK sees the request, from
 * the route's configuration: the key check (401 with its challenge), the cost header, and for a
 * `tools/call` its operation and rate limit (a 429 in the contract's format with Retry-After,
 * the budget shared with REST). Only then is the raw response handed to a fresh server and
 * transport; a successful tool call is metered inside the tool, before the SDK writes its answer,
 * unless its client has left or cancelled it.
 * Other methods are 405 with `Allow: POST`, in the contract's error format like every route.
 */
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { internalError } from '../errors/api-errors.ts';
import { callOf, type JobRunner } from '../operation.ts';
import { InFlightToolCalls } from './cancellation.ts';
import { TOOL_SERVERS, createToolServer, type ToolServerDef } from './servers.ts';
import { toolCallId, toolCallOperation } from './tool-call.ts';
import type { ToolContext } from './tool-result.ts';

/** Fastify writes its headers only when it sends; a hijacked reply needs them on the raw response. */
function copyHeadersToRaw(reply: FastifyReply): void {
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value);
}

async function serve(
  app: FastifyInstance,
  runner: JobRunner,
  definition: ToolServerDef,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  const context: ToolContext = {
    runner,
    call: callOf(request),
    log: request.log,
    charge: (operation) => app.charge(request, reply, operation),
  };
  const server = createToolServer(definition, context);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  reply.hijack();
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
      reply.raw.end(JSON.stringify(internalError(request.id).toBody()));
    }
  }
}

export function mcpRoutes(app: FastifyInstance, options: { runner: JobRunner }, done: (error?: Error) => void): void {
  const inFlight = new InFlightToolCalls();
  for (const definition of TOOL_SERVERS) {
    app.post(
      `/api/mcp/${definition.name}`,
      {
        schema: { hide: true },
        config: { auth: 'key', toolOperations: definition.operations },
        preHandler: async (request, reply) => {
          const keyId = request.identity.key?.id;
          if (keyId === undefined) return;
          // A client aborting one of its calls says so in a POST of its own (see cancellation.ts).
          const cancelled = inFlight.cancel(keyId, request.body);
          if (cancelled > 0) request.log.info({ cancelled }, 'tool call cancelled by its client');
          const operation = toolCallOperation(request.body, definition.operations);
          if (operation === undefined) return;
          request.operation = operation;
          await app.limiters[operation]?.(request, reply);
          inFlight.track(keyId, toolCallId(request.body), reply);
        },
      },
      (request, reply) => serve(app, options.runner, definition, request, reply),
    );
  }
  done();
}
