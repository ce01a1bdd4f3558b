/**
 * The tool servers over stateless Streamable HTTP (`POST /api/mcp/email-verify`, `POST /api/mcp/qr`).
 * Everything the REST routes get from the gateway happens from the route's configuration, before
 * the SDK sees the request: the key check (401 with its challenge), the cost header, and for a
 * `tools/call` its operation and rate limit (a 429 in the contract's format with Retry-After, the
 * budget shared with REST). A fresh server and SDK transport (the web-standard one: a Request in,
 * a Response out) answer each POST, and the answer leaves through fastify like any other, so the
 * metering and error plugins see it: a successful tool call is metered inside the tool (unless
 * its client has left or cancelled it), and the SDK's own HTTP-level refusals (not JSON-RPC, a
 * wrong Accept header, ...) are answered in the contract's error format. Other methods are 405
 * with `Allow: POST`.
 */
import { ApiError } from '@svc/contracts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ListService } from '@svc/lists/service';
import type { Feedback } from '@svc/feedback';
import { callOf, type JobRunner } from '../operation.ts';
import { InFlightToolCalls } from './cancellation.ts';
import type { CancellationRelay } from './cancellation-relay.ts';
import { FREE_REMAINING_HEADER } from '../plugins/metering.ts';
import { callerKey } from '../routes/guards.ts';
import { loadMcpSdk } from './sdk.ts';
import { TOOL_SERVERS, createToolServer, type ToolServerDef } from './servers.ts';
import { malformedToolCalls, toolCallId, toolCallOperation } from './tool-call.ts';
import { withContractToolErrors } from './tool-result.ts';

/** The request headers the SDK's transport reads. */
const FORWARDED_HEADERS = ['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id'];

/** The SDK refused the request at HTTP level (its body is a JSON-RPC error): the contract's error instead. */
function protocolRefusal(status: number, body: string): ApiError {
  let message = 'The request is not a valid MCP message.';
  try {
    const parsed = JSON.parse(body) as { error?: { code?: number; message?: string } };
    if (parsed.error?.code === -32700) message = 'The body is not a JSON-RPC 2.0 message or a batch of them.';
    else if (typeof parsed.error?.message === 'string') message = `${parsed.error.message}.`.replace(/\.\.$/, '.');
  } catch {
    // Not JSON: keep the general message.
  }
  if (status === 406) return new ApiError('invalid_request', 'Send `Accept: application/json, text/event-stream` to the tool servers.');
  if (status === 413) return new ApiError('payload_too_large', message);
  if (status === 415) return new ApiError('unsupported_media_type', 'Send the body as application/json.');
  return new ApiError(status >= 500 ? 'internal_error' : 'invalid_request', message);
}

async function serve(
  app: FastifyInstance,
  runner: JobRunner,
  lists: ListService,
  feedback: Feedback | undefined,
  definition: ToolServerDef,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const server = await createToolServer(definition, {
    runner,
    key: callerKey(request),
    lists,
    ...(feedback === undefined ? {} : { feedback }),
    call: callOf(request),
    log: request.log,
    charge: (operation) => app.charge(request, reply, operation),
    announceFreeRemaining: (freeRemaining) => void reply.header(FREE_REMAINING_HEADER, String(freeRemaining)),
  });
  const { StreamableTransport } = await loadMcpSdk();
  const transport = new StreamableTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  try {
    await server.connect(transport);
    const headers = new Headers();
    for (const name of FORWARDED_HEADERS) {
      const value = request.headers[name];
      if (typeof value === 'string') headers.set(name, value);
    }
    const url = `http://gateway${request.url}`;
    // The body is parsed already (JSON only, 64 KiB); null lets the SDK answer a missing one.
    const response = await transport.handleRequest(new Request(url, { method: 'POST', headers }), { parsedBody: request.body ?? null });
    const body = await response.text();
    if (response.status >= 400) throw protocolRefusal(response.status, body);
    const type = response.headers.get('content-type');
    if (type !== null) reply.type(type);
    return await reply
      .code(response.status)
      .send(body === '' ? undefined : withContractToolErrors(body, request.id, malformedToolCalls(request.body)));
  } finally {
    await transport.close();
    await server.close();
  }
}

export function mcpRoutes(
  app: FastifyInstance,
  options: { runner: JobRunner; lists: ListService; relay?: CancellationRelay; feedback?: Feedback },
  done: (error?: Error) => void,
): void {
  const inFlight = new InFlightToolCalls(options.relay);
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
          const cancelled = await inFlight.cancel(keyId, request.body);
          if (cancelled > 0) request.log.info({ cancelled }, 'tool call cancelled by its client');
          const operation = toolCallOperation(request.body, definition.operations);
          if (operation === undefined) return;
          request.operation = operation;
          await app.limiters[operation]?.(request, reply);
          inFlight.track(keyId, toolCallId(request.body), reply);
        },
      },
      (request, reply) => serve(app, options.runner, options.lists, options.feedback, definition, request, reply),
    );
  }
  inFlight.listen().then(() => done(), done);
}
