import type { Config } from '@svc/config';
import type { OperationId } from '@svc/contracts';
import type { JobTransport } from '@svc/jobs';
import type { GatewayMetrics, Logger } from '@svc/telemetry';
import type { KeyStore, ApiKeyRecord } from './stores/key-store.ts';
import type { Meter } from '@svc/metering';
import type { Redis } from '@svc/jobs/redis';
import type { ListQueue, ListStore } from '@svc/lists';
import type { CancellationRelay } from './mcp/cancellation-relay.ts';
import type { Feedback } from '@svc/feedback';

/** Rate-limited routes that are not billable operations. */
export type UnmeteredLimit = 'email-verify.feedback';

/** Everything the gateway needs from outside; main.ts and scripts/start.ts assemble it per mode. */
export interface GatewayDeps {
  config: Config;
  transport: JobTransport;
  keys: KeyStore;
  meter: Meter;
  /** Shared rate-limit store in distributed mode; in-memory counters when absent. */
  rateLimitRedis?: Redis;
  metrics: GatewayMetrics;
  /** Text exposition of every metric of this process. */
  renderMetrics: () => Promise<{ contentType: string; body: string }>;
  logger: Logger;
  /** Where lists are kept and their work queued (Redis and BullMQ, or this process). */
  lists: { store: ListStore; queue: ListQueue };
  /** Learning from sends: feedback doors and history (memory or Redis). */
  feedback: Feedback;
  /** Passes tool-call cancellations between gateway replicas (distributed mode). */
  toolCallRelay?: CancellationRelay;
}

export interface Identity {
  /** The authenticated key, or null (missing, malformed, unknown or revoked). */
  key: ApiKeyRecord | null;
  credential: 'missing' | 'malformed' | 'unknown' | 'revoked' | 'valid';
}

declare module 'fastify' {
  interface FastifyRequest {
    identity: Identity;
    /** The billable operation this request performs, once known. */
    operation: OperationId | undefined;
    startedAt: number;
    /**
     * Aborted when the caller closes the connection before its answer was sent. Made on first
     * read (plugins/observability.ts): a QR call never reads it.
     */
    callerGone: AbortSignal;
    /** Whether the caller has closed the connection before its answer was sent (no signal made). */
    callerLeft: boolean;
    /** callerGone's controller, once it was read; observability.ts alone uses it. */
    callerGoneController: AbortController | null;
  }
  /** What a route declares; the plugins act on it (never on the URL). */
  interface FastifyContextConfig {
    /** `key`: the route needs a valid API key (401 otherwise); the caller is identified before its rate limit. */
    auth?: 'key';
    /** The billable operation of the route: rate-limited, metered, cost headers, no HEAD. */
    operation?: OperationId;
    /** A tool server: metered like a billable route, its tool calls limited and billed per operation. */
    toolOperations?: readonly OperationId[];
    /** The key may also come as an HTTP Basic password (the feedback webhooks). */
    basicAuth?: boolean;
    /** A limit of its own for a route that is not billed (`email-verify.feedback`): plugins/rate-limit.ts. */
    unmeteredLimit?: UnmeteredLimit;
    /** How long the request's body may take to arrive (plugins/body-timeout.ts); default 30 s. */
    bodyTimeoutMs?: number;
  }
}
