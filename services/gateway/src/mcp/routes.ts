/**
 * The tool servers over stateless Streamable HTTP (`POST /api/mcp/email-verify`, `POST /api/mcp/qr`),
 * both protocol eras on one endpoint (era.ts): the 2026-07-28 era through the SDK's handler
 * (`server/discover`, `_meta` on every request, JSON-RPC refusals), the 2025 era through its
 * Streamable HTTP transport (`initialize`; refusals in the contract's error format, as before).
 * Everything the REST routes get from the gateway happens from the route's configuration, before
 * the SDK sees the request: the key check (401 with its challenge), the cost header, and for a
 * `tools/call` its operation and rate limit (a 429 in the contract's format with Retry-After, the
 * budget shared with REST). A fresh server answers each POST, and the answer leaves through
 * fastify like any other (exchange.ts), so the metering and error plugins see it: a successful
 * tool call is metered inside the tool (unless its client has left or cancelled it). Other
 * methods are 405 with `Allow: POST`.
 */
import { ApiError } from '@svc/contracts';
import type { McpServer } from '@modelcontextprotocol/server';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ListService } from '@svc/lists/service';
import type { Feedback } from '@svc/feedback';
import { callOf, type JobRunner } from '../operation.ts';
import { InFlightToolCalls } from './cancellation.ts';
import type { CancellationRelay } from './cancellation-relay.ts';
import { FREE_REMAINING_HEADER } from '../plugins/metering.ts';
import { callerKey } from '../routes/guards.ts';
import { loadMcpSdk, type McpSdk } from './sdk.ts';
import { sendAnswer, webRequestOf } from './exchange.ts';
import { claimsModernEra } from './era.ts';
import { OriginPolicy } from './origin.ts';
import { portableToolLists } from './portable-schema.ts';
import { sendError } from '../errors/api-errors.ts';
import { TOOL_SERVERS, createToolServer, type ToolServerDef } from './servers.ts';
import { malformedToolCalls, toolCallId, toolCallOperation, wantsProgress } from './tool-call.ts';
import { withContractToolErrors } from './tool-result.ts';

/** A 2025 client's HTTP-level refusal by the SDK (its body is a JSON-RPC error): the contract's error instead. */
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

/**
 * A 2025-era request (`initialize`, then one POST per message): a fresh server and the SDK's
 * Streamable HTTP transport answer it, in JSON (as before the 2026 era was served) unless its
 * tool call asked for progress, which only an event stream can carry.
 */
async function serveLegacy(sdk: McpSdk, server: McpServer, webRequest: Request, body: unknown): Promise<Exchange> {
  const transport = new sdk.StreamableTransport({ sessionIdGenerator: undefined, enableJsonResponse: !wantsProgress(body) });
  const teardown = () => {
    void transport.close().catch(() => undefined);
    void server.close().catch(() => undefined);
  };
  try {
    await server.connect(transport);
    // The body is parsed already (JSON only, 64 KiB); null lets the SDK answer a missing one.
    const response = await transport.handleRequest(webRequest, { parsedBody: body ?? null });
    if (response.status >= 400) throw protocolRefusal(response.status, await response.text());
    return { response, teardown };
  } catch (error) {
    teardown();
    throw error;
  }
}

/**
 * A 2026-07-28 request (`server/discover`, `_meta` on every request): the SDK's handler answers
 * it, refusals included (JSON-RPC error bodies with the specification's codes). JSON unless a
 * tool sends notifications before its result; then an event stream.
 */
async function serveModern(sdk: McpSdk, server: McpServer, webRequest: Request, body: unknown, log: FastifyBaseLogger): Promise<Exchange> {
  const handler = sdk.createMcpHandler(() => server, {
    legacy: 'reject',
    onerror: (error) => log.error({ err: error }, 'the MCP handler failed'),
  });
  const response = await handler.fetch(webRequest, { parsedBody: body });
  return { response, teardown: () => void handler.close().catch(() => undefined) };
}

const header = (request: FastifyRequest, name: string): string | undefined => {
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
};

const FOREIGN_ORIGIN =
  "Requests from this browser origin are not allowed: only the service's own origin and those in MCP_ALLOWED_ORIGINS may call the tool servers.";

/** A foreign Origin, refused 403: a 2026 request as a JSON-RPC error (no id: nothing was read), a 2025 one in the contract's format. */
function refuseOrigin(reply: FastifyReply, version: string | undefined): FastifyReply {
  if (version === undefined || /^202[45]-/.test(version)) return sendError(reply, new ApiError('forbidden', FOREIGN_ORIGIN));
  return reply
    .code(403)
    .type('application/json; charset=utf-8')
    .send({ jsonrpc: '2.0', id: null, error: { code: -32000, message: `Forbidden: ${FOREIGN_ORIGIN}`, data: { error: 'forbidden' } } });
}

interface Exchange {
  response: Response;
  teardown: () => void;
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
  const sdk = await loadMcpSdk();
  const server = await createToolServer(definition, {
    runner,
    key: callerKey(request),
    lists,
    ...(feedback === undefined ? {} : { feedback }),
    call: callOf(request),
    log: request.log,
    logError: (error, apiError, fields) => app.logApiError(request.log, error, apiError, fields),
    charge: (operation) => app.charge(request, reply, operation),
    announceFreeRemaining: (freeRemaining) => void reply.header(FREE_REMAINING_HEADER, String(freeRemaining)),
  });
  const webRequest = webRequestOf(request, request.callerGone);
  const version = request.headers['mcp-protocol-version'];
  const modern = claimsModernEra(typeof version === 'string' ? version : undefined, request.body, sdk.legacyVersions);
  const exchange = modern
    ? await serveModern(sdk, server, webRequest, request.body, request.log)
    : await serveLegacy(sdk, server, webRequest, request.body);
  const malformed = malformedToolCalls(request.body);
  // A 2026 result says it is complete (not an input request); a 2025 one has no such field.
  const resultFields = modern ? { resultType: 'complete' } : {};
  return sendAnswer(reply, exchange.response, {
    rewrite: (body) => portableToolLists(withContractToolErrors(body, request.id, malformed, resultFields)),
    teardown: exchange.teardown,
  });
}

export function mcpRoutes(
  app: FastifyInstance,
  options: { runner: JobRunner; lists: ListService; relay?: CancellationRelay; allowedOrigins?: readonly string[]; feedback?: Feedback },
  done: (error?: Error) => void,
): void {
  const inFlight = new InFlightToolCalls(options.relay);
  const origins = new OriginPolicy(options.allowedOrigins ?? []);
  for (const definition of TOOL_SERVERS) {
    app.post(
      `/api/mcp/${definition.name}`,
      {
        schema: { hide: true },
        config: { auth: 'key', toolOperations: definition.operations },
        // Before the key check (appended after a route's own hooks) and before the body is read.
        onRequest: (request, reply, next) => {
          if (origins.allows(header(request, 'origin'), header(request, 'host'))) next();
          else void refuseOrigin(reply, header(request, 'mcp-protocol-version'));
        },
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
