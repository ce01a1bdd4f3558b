/**
 * Real gateways on loopback ports for the HTTP contract tests, in either mode. Distributed mode
 * uses the shared test Redis under a prefix of the file's own and real BullMQ workers.
 */
import { loadConfig } from '@svc/config';
import type { RegisteredHandler } from '@svc/jobs';
import { startBullWorker, type Worker } from '@svc/jobs/bullmq';
import { testRedisUrl, uniquePrefix, dropPrefix } from '@svc/testkit';
import { generateApiKey, type KeyStore } from '@svc/gateway';
import { buildDistributedGateway } from '@svc/gateway/distributed';
import { qrJobHandler } from '@svc/qr-worker';
import type { FastifyInstance } from 'fastify';
import { createVerifyHandler } from '@svc/verify-worker';
import { redisFeedback } from '@svc/feedback/redis';
import { Redis } from 'ioredis';
import { buildEmbedded } from '../../scripts/embedded.ts';
import { expectChargesRecorded, forgetServer, noteAnswer } from './charge-guard.ts';

export type Mode = 'embedded' | 'distributed';

export interface TestServer {
  mode: Mode;
  baseUrl: string;
  /** Where its /metrics answers (GATEWAY_METRICS_PORT; never the API port). */
  metricsUrl: string;
  prefix: string;
  /** A valid key, and one that was issued and then revoked. */
  key: string;
  revokedKey: string;
  keys: KeyStore;
  close(): Promise<void>;
}

export interface ServerOptions {
  env?: Record<string, string>;
  /** Share a Redis namespace with another server (two gateway replicas). */
  prefix?: string;
  /** Start BullMQ workers beside the gateway (distributed mode); default true. */
  workers?: boolean;
  /** Workers to run instead of the product's own (default: QR and verify). */
  handlers?: RegisteredHandler[];
  /** Keys to issue instead of fresh ones (replicas share keys through Redis anyway). */
  key?: string;
}

const BASE_ENV = { LOG_LEVEL: 'silent', PORT: '0', HOST: '127.0.0.1' };

interface Parts {
  app: FastifyInstance;
  metrics: FastifyInstance;
  keys: KeyStore;
  close: () => Promise<void>;
}

async function embeddedParts(options: ServerOptions, key: string, revokedKey: string): Promise<Parts> {
  const config = loadConfig({ ...BASE_ENV, API_KEYS: `${key},${revokedKey}`, ...options.env });
  const embedded = await buildEmbedded(config, options.handlers === undefined ? {} : { handlers: options.handlers });
  await embedded.keys.revoke('API_KEYS[1]');
  return {
    app: embedded.gateway.app,
    metrics: embedded.gateway.metrics,
    keys: embedded.keys,
    close: async () => {
      await embedded.gateway.app.close();
      await embedded.close();
    },
  };
}

async function distributedParts(options: ServerOptions, key: string, revokedKey: string, prefix: string): Promise<Parts> {
  const url = testRedisUrl();
  const config = loadConfig({ ...BASE_ENV, REDIS_URL: url, REDIS_PREFIX: prefix, ...options.env });
  const built = await buildDistributedGateway(config);
  await built.keys.create('test', key);
  await built.keys.create('revoked', revokedKey);
  await built.keys.revoke('revoked');
  // The verify worker reads the feedback the gateway's doors write (Redis), as a deployed one does.
  const feedbackRedis = new Redis(url, { maxRetriesPerRequest: 1 });
  const feedback = redisFeedback(feedbackRedis, prefix, config);
  const workers: Worker[] =
    options.workers === false
      ? []
      : (options.handlers ?? [qrJobHandler, createVerifyHandler({ config, feedback })]).map((handler) =>
          startBullWorker(handler, { redis: url, redisPrefix: prefix, concurrency: 4 }),
        );
  return {
    app: built.gateway.app,
    metrics: built.gateway.metrics,
    keys: built.keys,
    close: async () => {
      await built.gateway.app.close();
      await Promise.all(workers.map((worker) => worker.close()));
      feedbackRedis.disconnect();
      for (const close of built.closers) await close();
      if (options.prefix === undefined) await dropPrefix(url, prefix);
    },
  };
}

export async function startServer(mode: Mode, options: ServerOptions = {}): Promise<TestServer> {
  const key = options.key ?? generateApiKey();
  const revokedKey = generateApiKey();
  const prefix = options.prefix ?? uniquePrefix(mode);
  const parts =
    mode === 'embedded' ? await embeddedParts(options, key, revokedKey) : await distributedParts(options, key, revokedKey, prefix);
  const baseUrl = await parts.app.listen({ port: 0, host: '127.0.0.1' });
  const metricsUrl = await parts.metrics.listen({ port: 0, host: '127.0.0.1' });
  // Before it closes: every 2xx of a per-call operation seen by call() is in the meter (charge-guard.ts).
  const close = async () => {
    try {
      await expectChargesRecorded(baseUrl);
    } finally {
      forgetServer(baseUrl);
      await parts.close();
    }
  };
  return { mode, baseUrl, metricsUrl, prefix, key, revokedKey, keys: parts.keys, close };
}

export async function call(
  server: Pick<TestServer, 'baseUrl'>,
  path: string,
  init: RequestInit & { key?: string | null } = {},
): Promise<{ status: number; headers: Headers; text: string; json: () => unknown }> {
  const headers = new Headers(init.headers);
  if (init.key !== null && init.key !== undefined) headers.set('authorization', `Bearer ${init.key}`);
  const response = await fetch(`${server.baseUrl}${path}`, { ...init, headers });
  const text = await response.text();
  // A 2xx of an operation billed per call that was never charged fails here (charge-guard.ts).
  noteAnswer(server.baseUrl, init.method ?? 'GET', path, init.key ?? undefined, response.status, response.headers);
  return { status: response.status, headers: response.headers, text, json: (): unknown => JSON.parse(text) };
}

/** `POST /v1/email-verify/verify/batch` with `{ emails }` as JSON, under `key`. */
export function postBatch(
  server: Pick<TestServer, 'baseUrl'>,
  key: string | null,
  emails: unknown,
  init: RequestInit = {},
): ReturnType<typeof call> {
  return call(server, '/v1/email-verify/verify/batch', {
    ...init,
    key,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ emails }),
  });
}
