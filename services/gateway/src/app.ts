/**
 * The gateway: small plugins, each owning one concern, registered here in the order a request
 * meets them (ids and metrics, errors, authentication, rate limits, metering), then the routes.
 * Routes declare what they need in their configuration (`auth`, `operation`); the plugins act on
 * that.
 */
import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import { ListService } from '@svc/lists/service';
import { createAccessLog, loggerOptions } from '@svc/telemetry';
import { clientErrorHandler, frameworkErrorHandler, settleUnreadBody, refuseConnect, watchResponses } from './errors/client-errors.ts';
import { BODY_LIMIT_BYTES } from './errors/api-errors.ts';
import { useBoundedJsonParser } from './json-body/bounded-json.ts';
import { mcpRoutes } from './mcp/routes.ts';
import { buildMetricsListener } from './metrics-listener.ts';
import { createJobRunner } from './operation.ts';
import authPlugin from './plugins/auth.ts';
import consoleRoutes from './plugins/console.ts';
import bodyTimeoutPlugin from './plugins/body-timeout.ts';
import errorsPlugin from './plugins/errors.ts';
import meteringPlugin from './plugins/metering.ts';
import observabilityPlugin from './plugins/observability.ts';
import openapiPlugin from './plugins/openapi.ts';
import rateLimitPlugin from './plugins/rate-limit.ts';
import { plainSerializerCompiler, schemaCompilersFactory, zodValidatorCompiler } from './plugins/validation.ts';
import { healthRoutes } from './routes/health.ts';
import { listRoutes } from './routes/lists.ts';
import { qrRoutes } from './routes/qr.ts';
import { feedbackRoutes } from './routes/feedback.ts';
import { usageRoutes } from './routes/usage.ts';
import { verifyRoutes } from './routes/verify.ts';
import type { GatewayDeps } from './types.ts';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Slow clients hold no connection (slowloris): the request line and headers must arrive within
 * HEADERS_TIMEOUT_MS, and the body within its route's allowance (plugins/body-timeout.ts:
 * REQUEST_BODY_TIMEOUT_MS, 30 s; LIST_UPLOAD_TIMEOUT_MS, 10 minutes, for a list upload whose key
 * was accepted; Node's own limit is the longest of them, and a little more); an idle keep-alive
 * connection closes after KEEP_ALIVE_TIMEOUT_MS (all four from the configuration). Once a request has
 * arrived, its connection lives as long as the request waits for its job (its own deadline,
 * up to 32 s for a verify batch): there is no idle timeout on a connection with a request in
 * flight, and the answer at the deadline (504) goes out on the same connection.
 */
const NODE_KEEP_ALIVE_BUFFER_MS = 1_000;
/** Node's own request limit lies past every route's body allowance: ours answer 408 first. */
const NODE_REQUEST_TIMEOUT_MARGIN_MS = 5_000;

export interface GatewayApp {
  app: FastifyInstance;
  /** `/metrics`, to listen on GATEWAY_METRICS_PORT (metrics-listener.ts). */
  metrics: FastifyInstance;
  /** Stops readiness and new work (SIGTERM); in-flight requests still finish. */
  drain(): void;
}

export async function buildGateway(deps: GatewayDeps): Promise<GatewayApp> {
  const { config, metrics } = deps;
  let accepting = true;
  const app = Fastify({
    logger: loggerOptions(config.LOG_LEVEL, 'gateway'),
    // One access line per request, from the observability plugin, instead of fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT_BYTES,
    // Take the caller's request id when it is sane, else make one: it is echoed and logged.
    genReqId: (request) => {
      const sent = request.headers['x-request-id'];
      return typeof sent === 'string' && REQUEST_ID.test(sent) ? sent : randomUUID();
    },
    // Node answers an HTTP/1.1 request without Host with a bare 400 of its own (no body, no
    // request id); the errors plugin refuses it in the contract's format instead.
    http: { headersTimeout: config.HEADERS_TIMEOUT_MS, connectionsCheckingInterval: 1_000, requireHostHeader: false },
    requestTimeout: Math.max(config.LIST_UPLOAD_TIMEOUT_MS, config.REQUEST_BODY_TIMEOUT_MS) + NODE_REQUEST_TIMEOUT_MARGIN_MS,
    connectionTimeout: 0,
    // Idle keep-alive connections close after KEEP_ALIVE_TIMEOUT_MS (fastify's own default was
    // 72 s). Node arms the idle socket's timer 1 s past what it is given (measured: 5000 closed at
    // 6.0 s), so that a client told `Keep-Alive: timeout=N` never reuses a socket as it closes.
    keepAliveTimeout: Math.max(1, config.KEEP_ALIVE_TIMEOUT_MS - NODE_KEEP_ALIVE_BUFFER_MS),
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // What Node's HTTP parser (431, malformed request lines, 408) and the router (undecodable
    // paths) refuse, in the contract's format.
    clientErrorHandler,
    frameworkErrors: frameworkErrorHandler,
    schemaController: { compilersFactory: schemaCompilersFactory },
    // A list id of any length is looked up (and not found, 404): fastify's default of 100
    // characters answered a longer one 400.
    routerOptions: { maxParamLength: 2_048 },
  });
  // An Expect other than 100-continue is ignored (RFC 9110 §10.1.1 allows it): without this
  // listener Node answers 417 itself, outside the contract's format.
  app.server.on('checkExpectation', (request, response) => app.server.emit('request', request, response));
  app.server.on('connect', refuseConnect.bind(app));
  watchResponses(app.server);
  app.setValidatorCompiler(zodValidatorCompiler);
  app.setSerializerCompiler(plainSerializerCompiler);
  // Only JSON bodies are accepted: a text body is 415, not a string to validate.
  app.removeContentTypeParser(['text/plain']);
  // JSON bodies are measured before they are built (bounded memory whatever their shape).
  useBoundedJsonParser(app);
  // While draining, tell clients not to reuse the connection for their next request; a refusal
  // that goes out before the body arrived closes the connection (errors/client-errors.ts).
  app.addHook('onSend', (request, reply, payload, next) => {
    if (!accepting) reply.header('connection', 'close');
    else if (!request.raw.complete && settleUnreadBody(request.raw, reply.statusCode)) reply.header('connection', 'close');
    next(null, payload);
  });

  const accessLog = createAccessLog(config.LOG_LEVEL, 'gateway');
  app.addHook('onClose', (_instance, done) => {
    accessLog.close();
    done();
  });
  await app.register(observabilityPlugin, { metrics, accessLog });
  await app.register(errorsPlugin, { errorWindowMs: config.LOG_ERROR_WINDOW_MS });
  await app.register(bodyTimeoutPlugin, { bodyTimeoutMs: config.REQUEST_BODY_TIMEOUT_MS });
  await app.register(authPlugin, { keys: deps.keys });
  await app.register(rateLimitPlugin, {
    limits: config.rateLimits,
    unmetered: { 'email-verify.feedback': config.RATE_LIMIT_EMAIL_VERIFY_FEEDBACK },
    windowMs: config.RATE_LIMIT_WINDOW_MS,
    redis: deps.rateLimitRedis,
    redisPrefix: config.REDIS_PREFIX,
    onRejected: (operation) => metrics.rateLimited.inc({ operation }),
  });
  await app.register(meteringPlugin, {
    meter: deps.meter,
    freeAllowances: config.freeAllowances,
    metrics,
    deadlines: config.requestDeadlineMs,
    meterTimeoutMs: config.redis?.commandTimeoutMs ?? 0,
  });
  await app.register(openapiPlugin, { version: '1.0.0' });

  const runner = createJobRunner(deps.transport, config.requestDeadlineMs, metrics);
  await app.register(healthRoutes, { transport: deps.transport, isAcceptingWork: () => accepting });
  await app.register(qrRoutes, { runner });
  await app.register(verifyRoutes, { runner });
  const lists = new ListService({
    store: deps.lists.store,
    queue: deps.lists.queue,
    meter: deps.meter,
    maxActivePerKey: config.LIST_MAX_ACTIVE_PER_KEY,
    maxStoredRowsPerKey: config.LIST_MAX_STORED_ROWS_PER_KEY,
    freeAllowances: config.freeAllowances,
    allowPrivateCallbacks: config.LIST_ALLOW_PRIVATE_CALLBACKS,
    retryDelaysS: config.LIST_RETRY_DELAYS_S,
  });
  await app.register(listRoutes, { lists, uploadTimeoutMs: config.LIST_UPLOAD_TIMEOUT_MS });
  await app.register(mcpRoutes, {
    runner,
    lists,
    allowedOrigins: config.MCP_ALLOWED_ORIGINS ?? [],
    feedback: deps.feedback,
    ...(deps.toolCallRelay === undefined ? {} : { relay: deps.toolCallRelay }),
  });
  await app.register(usageRoutes, { meter: deps.meter, freeAllowances: config.freeAllowances });
  await app.register(feedbackRoutes, { feedback: deps.feedback, config });
  await app.register(consoleRoutes, {});

  const metricsListener = buildMetricsListener(deps.renderMetrics);
  app.addHook('onClose', async () => {
    await metricsListener.close();
  });
  return { app, metrics: metricsListener, drain: () => void (accepting = false) };
}
