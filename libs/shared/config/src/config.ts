/**
 * The one configuration schema of every process (README.md, "Configuration"). The environment
 * names are a contract: deployments, compose files and test rigs set them, and a test checks that
 * every name they use exists here.
 */
import { hostname } from 'node:os';
import { z } from 'zod';
import { OPERATIONS, type OperationId } from '@svc/contracts';
import { redisTopology, type RedisTopology } from './redis-topology.ts';

const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
const bool = z.enum(['true', 'false', '1', '0', 'yes', 'no']).transform((value) => value === 'true' || value === '1' || value === 'yes');
const csv = z.string().transform((value) =>
  value
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== ''),
);

const hostPort = z.string().regex(/^(\[[0-9a-fA-F:.]+\]|[^\s:]+)(:\d{1,5})?$/, 'expected host or host:port');

export const envSchema = z.object({
  PORT: int(0, 65535).default(3000),
  HOST: z.string().min(1).default('0.0.0.0'),
  /** The gateway's /metrics listener (on HOST): never the public API port. */
  GATEWAY_METRICS_PORT: int(0, 65535).default(9102),
  /** Idle keep-alive connections of the gateway close after this. */
  KEEP_ALIVE_TIMEOUT_MS: int(1_001, 600_000).default(5_000),
  /** A request's line and headers must arrive within this (slow clients hold no connection). */
  HEADERS_TIMEOUT_MS: int(1_000, 600_000).default(10_000),
  /** A request's body must arrive within this from the request's start (any body but a list upload). */
  REQUEST_BODY_TIMEOUT_MS: int(1_000, 600_000).default(30_000),
  /** A list upload whose key was accepted may take this long: 16 MiB in 10 minutes is 28 KB/s. */
  LIST_UPLOAD_TIMEOUT_MS: int(1_000, 3_600_000).default(600_000),
  /** One Redis (`redis://`, `rediss://`) or Sentinel (`redis+sentinel://[user:pass@]host:port[,host:port]/master`). */
  REDIS_URL: z
    .string()
    .regex(/^(redis|rediss|redis\+sentinel):\/\/\S+$/, 'expected redis://, rediss:// or redis+sentinel://')
    .optional(),
  REDIS_CLUSTER_NODES: csv.pipe(z.array(hostPort).min(1)).optional(),
  REDIS_SENTINELS: csv.pipe(z.array(hostPort).min(1)).optional(),
  REDIS_SENTINEL_MASTER: z
    .string()
    .regex(/^[A-Za-z0-9_.-]+$/)
    .default('mymaster'),
  REDIS_USERNAME: z.string().min(1).optional(),
  REDIS_PASSWORD: z.string().min(1).optional(),
  REDIS_TLS: bool.default(false),
  /** Longest a Redis command on a request's path may take before the request is answered 503. */
  REDIS_COMMAND_TIMEOUT_MS: int(50, 60_000).default(1_000),
  /**
   * Namespaces every Redis key and queue of this deployment (tests give each file its own). The
   * product tags its keys itself; a prefix with one `{tag}` of its own puts every key in one
   * cluster slot (correct, but nothing spreads), so braces are allowed only balanced and once.
   */
  REDIS_PREFIX: z
    .string()
    .regex(/^(?=.)[A-Za-z0-9_.:-]*(\{[A-Za-z0-9_.:-]+\}[A-Za-z0-9_.:-]*)?$/, 'letters, digits, _ . : - and at most one {tag}')
    .default('svc'),
  API_KEYS: csv.optional(),
  /** Browser origins (`https://app.example.com`) allowed to call the tool servers besides the service's own. */
  MCP_ALLOWED_ORIGINS: csv.optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Window of the backend's error logs (one line per kind per window, with a count); 10 s in the contract, shorter only in test rigs. */
  LOG_ERROR_WINDOW_MS: int(100, 3_600_000).default(10_000),

  RATE_LIMIT_EMAIL_VERIFY_BATCH: int(0, 1_000_000).default(OPERATIONS['email-verify.batch'].defaultRateLimitPerMinute),
  RATE_LIMIT_EMAIL_VERIFY_SINGLE: int(0, 1_000_000).default(OPERATIONS['email-verify.single'].defaultRateLimitPerMinute),
  RATE_LIMIT_QR_GENERATE: int(0, 1_000_000).default(OPERATIONS['qr.generate'].defaultRateLimitPerMinute),
  RATE_LIMIT_QR_WIFI: int(0, 1_000_000).default(OPERATIONS['qr.wifi'].defaultRateLimitPerMinute),
  RATE_LIMIT_EMAIL_VERIFY_LIST: int(0, 1_000_000).default(OPERATIONS['email-verify.list'].defaultRateLimitPerMinute),
  /** Length of the rate-limit window; 60 s in the contract, shorter only in test rigs. */
  RATE_LIMIT_WINDOW_MS: int(1, 3_600_000).default(60_000),
  FREE_ALLOWANCE_EMAIL_VERIFY_BATCH: int(0, 1_000_000_000).default(OPERATIONS['email-verify.batch'].defaultFreeAllowance),
  FREE_ALLOWANCE_EMAIL_VERIFY_SINGLE: int(0, 1_000_000_000).default(OPERATIONS['email-verify.single'].defaultFreeAllowance),
  FREE_ALLOWANCE_QR_GENERATE: int(0, 1_000_000_000).default(OPERATIONS['qr.generate'].defaultFreeAllowance),
  FREE_ALLOWANCE_QR_WIFI: int(0, 1_000_000_000).default(OPERATIONS['qr.wifi'].defaultFreeAllowance),
  REQUEST_DEADLINE_MS: int(100, 600_000).optional(),
  /** Milliseconds the gateway keeps answering in-flight requests after SIGTERM before it exits. */
  SHUTDOWN_GRACE_MS: int(0, 600_000).default(25_000),

  /** Workers: how many jobs one process runs at once, and where its /metrics and /healthz listen. */
  QR_WORKER_CONCURRENCY: int(1, 1000).default(8),
  VERIFY_WORKER_CONCURRENCY: int(1, 1000).default(4),
  /** Unset: the worker's own default (DEFAULT_WORKER_METRICS_PORTS), so that both kinds run on one host. */
  WORKER_METRICS_PORT: int(0, 65535).optional(),
  WORKER_METRICS_HOST: z.string().min(1).default('0.0.0.0'),

  VERIFY_DNS_SERVERS: csv.pipe(z.array(hostPort)).optional(),
  VERIFY_SMTP_PORT: int(1, 65535).default(25),
  VERIFY_ALLOW_PRIVATE_MX: bool.default(false),
  VERIFY_HELO_NAME: z
    .string()
    .regex(/^[A-Za-z0-9.-]+$/)
    .optional(),
  VERIFY_MAIL_FROM: z
    .string()
    .regex(/^[^\s<>]+@[A-Za-z0-9.-]+$/)
    .optional(),
  VERIFY_CONNECT_TIMEOUT_MS: int(1, 600_000).default(5_000),
  VERIFY_COMMAND_TIMEOUT_MS: int(1, 600_000).default(10_000),
  VERIFY_BATCH_DEADLINE_MS: int(100, 600_000).default(30_000),
  VERIFY_MAX_CONNECTIONS_PER_HOST: int(1, 100).default(2),
  /** One `socks5://host:port` egress, or a comma-separated pool of them (sessions spread over the pool). */
  VERIFY_SOCKS_PROXY: csv.pipe(z.array(z.string().regex(/^socks5h?:\/\/[^\s,]+$/, 'expected socks5://host:port')).min(1)).optional(),
  /** Domains that must resolve to an MX set for the resolver to be trusted (at least half of them). */
  VERIFY_DNS_CANARIES: csv
    .pipe(z.array(z.string().regex(/^[A-Za-z0-9.-]+$/, 'expected a domain')))
    .default(['gmail.com', 'outlook.com', 'yahoo.com']),
  /** Mail servers (`host` or `host:port`) of which one must accept a TCP connection for the egress to be open; unset: the DNS canaries' MX hosts. */
  VERIFY_SMTP_CANARIES: csv.pipe(z.array(hostPort)).optional(),
  /** Seconds to cache per-address outcomes and domain facts (MX answers also honour their DNS TTL). */
  VERIFY_RESULT_CACHE_TTL_S: int(0, 30 * 86_400).default(86_400),
  VERIFY_DOMAIN_CACHE_TTL_S: int(0, 30 * 86_400).default(3_600),
  /**
   * Politeness at volume (docs/verification.md): budgets per provider and egress as JSON
   * (`{"google":{"sessionsPerMinute":5},"*":{...}}`, merged over the documented defaults), the
   * window they count in, the first back-off after a throttle reply, and how long an idle SMTP
   * session waits for the next batch to the same server.
   */
  VERIFY_PROVIDER_BUDGETS: z.string().max(65_536).optional(),
  VERIFY_PROVIDER_BUDGET_WINDOW_MS: int(1_000, 3_600_000).default(60_000),
  VERIFY_THROTTLE_BACKOFF_MS: int(100, 900_000).default(60_000),
  VERIFY_SMTP_SESSION_IDLE_MS: int(0, 60_000).default(2_000),

  /** List callbacks may also use http:// and reach loopback/private addresses (test rigs, private networks). */
  LIST_ALLOW_PRIVATE_CALLBACKS: bool.default(false),
  /** Embedded mode: signs every key's list callbacks; generated and printed once at start-up when unset. */
  LIST_WEBHOOK_SECRET: z
    .string()
    .regex(/^\S{16,256}$/, 'expected 16 to 256 characters without spaces')
    .optional(),
  /** Lists (bulk jobs): queued or running lists per key, days a list's data outlives its end. */
  LIST_MAX_ACTIVE_PER_KEY: int(1, 1_000).default(3),
  /** Storage quota: rows of a key's lists kept at once (duplicates and rows without an address included). */
  LIST_MAX_STORED_ROWS_PER_KEY: int(1, 1_000_000_000).default(1_000_000),
  LIST_RETENTION_DAYS: int(1, 365).default(7),
  /** Waits before each retry of a temporary answer (greylisting, timeouts); their count is the number of retries. */
  LIST_RETRY_DELAYS_S: csv
    .pipe(
      z
        .array(
          z
            .string()
            .regex(/^\d{1,5}$/, 'expected whole seconds')
            .transform(Number),
        )
        .max(10),
    )
    .default([60, 300, 240]),
  /** List chunks one verify-worker process probes at once, beside its batch jobs. */
  LIST_WORKER_CONCURRENCY: int(1, 100).default(2),

  /** Learning from sends (docs/feedback.md): feedback calls per minute per key. */
  RATE_LIMIT_EMAIL_VERIFY_FEEDBACK: int(0, 1_000_000).default(60),
  /** Whose answers a report changes: the reporting key's (`key`) or every key's (`deployment`). */
  FEEDBACK_SCOPE: z.enum(['key', 'deployment']).default('key'),
  /** How long a hard bounce makes an address `known_bounce`; how long a delivery must stand to count (fractions allowed: test rigs). */
  FEEDBACK_BOUNCE_TTL_DAYS: z.coerce.number().positive().max(3_650).default(180),
  FEEDBACK_DELIVERY_SETTLE_H: z.coerce.number().min(0).max(8_760).default(72),
  /** When set, Mailgun's webhook bodies must carry a valid signature (its HTTP webhook signing key). */
  FEEDBACK_MAILGUN_SIGNING_KEY: z.string().min(1).optional(),
  /** When set, SendGrid's Event Webhook must be signed (the verification key SendGrid shows, base64). */
  FEEDBACK_SENDGRID_PUBLIC_KEY: z.string().min(1).optional(),
  /** The keyed hash under which feedback and history are stored; unset: generated once and kept in the backend. */
  HISTORY_HASH_SECRET: z
    .string()
    .regex(/^\S{16,256}$/, 'expected 16 to 256 characters without spaces')
    .optional(),
  /** How long feedback and history are kept (fractions allowed: test rigs). */
  HISTORY_RETENTION_DAYS: z.coerce.number().positive().max(36_500).default(365),
});

export type Env = z.infer<typeof envSchema>;

export type WorkerService = 'verify-worker' | 'qr-worker';

/**
 * Each kind of worker has a metrics port of its own, so that a qr-worker and a verify-worker
 * started on one host without settings both run (one port for both was EADDRINUSE at start).
 */
export const DEFAULT_WORKER_METRICS_PORTS: Readonly<Record<WorkerService, number>> = { 'verify-worker': 9100, 'qr-worker': 9101 };

export const workerMetricsPort = (config: Pick<Env, 'WORKER_METRICS_PORT'>, service: WorkerService): number =>
  config.WORKER_METRICS_PORT ?? DEFAULT_WORKER_METRICS_PORTS[service];

export interface Config extends Env {
  mode: 'embedded' | 'distributed';
  /** Where the distributed mode's Redis is (undefined in embedded mode). */
  redis: RedisTopology | undefined;
  heloName: string;
  mailFrom: string;
  rateLimits: Record<OperationId, number>;
  freeAllowances: Record<OperationId, number>;
  /** How long a request of that operation waits for its job. */
  requestDeadlineMs: Record<OperationId, number>;
}

/** Every environment name this schema reads: compose and k8s manifests are checked against it. */
export const CONFIG_ENV_NAMES: readonly string[] = Object.keys(envSchema.shape);

export class ConfigError extends Error {}

/** `LIST_RETRY_DELAYS_S=` (empty): no retries. */
const EMPTY_IS_A_VALUE = new Set(['LIST_RETRY_DELAYS_S']);

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  // An empty variable means "unset" (compose files and shells often pass `FOO=`), except where the
  // documentation gives the empty value a meaning of its own.
  const present = Object.fromEntries(
    Object.entries(env).filter(([name, value]) => value !== undefined && (value !== '' || EMPTY_IS_A_VALUE.has(name))),
  );
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ');
    throw new ConfigError(`invalid configuration: ${problems}`);
  }
  const e = parsed.data;
  const heloName = e.VERIFY_HELO_NAME ?? hostname();
  const redis = redisTopology(e);
  if (typeof redis === 'string') throw new ConfigError(`invalid configuration: ${redis}`);
  const byOperation = <T>(pick: (id: OperationId) => T): Record<OperationId, T> => ({
    'email-verify.batch': pick('email-verify.batch'),
    'email-verify.single': pick('email-verify.single'),
    'qr.generate': pick('qr.generate'),
    'qr.wifi': pick('qr.wifi'),
    'email-verify.list': pick('email-verify.list'),
  });
  const qrDeadline = e.REQUEST_DEADLINE_MS ?? 10_000;
  const verifyDeadline = e.REQUEST_DEADLINE_MS ?? e.VERIFY_BATCH_DEADLINE_MS + 2_000;
  return {
    ...e,
    mode: redis === undefined ? 'embedded' : 'distributed',
    redis,
    heloName,
    mailFrom: e.VERIFY_MAIL_FROM ?? `verify@${heloName}`,
    rateLimits: byOperation((id) => e[OPERATIONS[id].rateLimitEnv]),
    freeAllowances: byOperation((id) => e[OPERATIONS[id].freeAllowanceEnv]),
    requestDeadlineMs: byOperation((id) => (id.startsWith('email-verify') ? verifyDeadline : qrDeadline)),
  };
}
