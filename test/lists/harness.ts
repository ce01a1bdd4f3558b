/**
 * Gateways with list work for the list tests, in either mode, with a recording stand-in for the
 * callback dispatcher. Distributed mode: the real gateway, a BullMQ verify worker and the list
 * worker in this process, on the shared test Redis under a prefix of their own, with session
 * slots counted in Redis as in production.
 */
import { afterAll, beforeAll } from 'vitest';
import { loadConfig } from '@svc/config';
import { createDistributedBackend } from '@svc/backend/distributed';
import { startBullWorker, type Worker } from '@svc/jobs/bullmq';
import { createLogger } from '@svc/telemetry';
import { Registry } from 'prom-client';
import { RecordingCallbackDispatcher, waitUntil } from '@svc/testkit';
import {
  dropPrefix,
  startDnsServer,
  startSmtpServer,
  findFreePort,
  testRedisUrl,
  uniquePrefix,
  type RigDnsServer,
  type RigSmtpServer,
  type SmtpServerScript,
} from '@svc/testkit';
import { generateApiKey, type KeyStore } from '@svc/gateway';
import { buildDistributedGateway } from '@svc/gateway/distributed';
import { createVerifyWork } from '@svc/verify-worker';
import type { ListObject, OperationId } from '@svc/contracts';
import type { FastifyInstance } from 'fastify';
import { buildEmbedded } from '../../scripts/embedded.ts';
import { call, type Mode } from '../support/servers.ts';

export interface ListServer {
  mode: Mode;
  baseUrl: string;
  key: string;
  keys: KeyStore;
  dispatcher: RecordingCallbackDispatcher;
  /** A key of its own (its own rate-limit budget, meter and active-list slots). */
  freshKey(freeAllowance?: Partial<Record<OperationId, number>>): Promise<string>;
  close(): Promise<void>;
}

const BASE_ENV = { LOG_LEVEL: 'silent', PORT: '0', HOST: '127.0.0.1', VERIFY_RESULT_CACHE_TTL_S: '0' };

export async function startListServer(mode: Mode, env: Record<string, string> = {}): Promise<ListServer> {
  const key = generateApiKey();
  const dispatcher = new RecordingCallbackDispatcher();
  let app: FastifyInstance;
  let keys: KeyStore;
  let close: () => Promise<void>;
  if (mode === 'embedded') {
    const config = loadConfig({ ...BASE_ENV, API_KEYS: key, ...env });
    const embedded = await buildEmbedded(config, { dispatcher });
    app = embedded.gateway.app;
    keys = embedded.keys;
    close = async () => {
      await app.close();
      await embedded.close();
    };
  } else {
    const url = testRedisUrl();
    const prefix = uniquePrefix('lists');
    const config = loadConfig({ ...BASE_ENV, REDIS_URL: url, REDIS_PREFIX: prefix, ...env });
    const built = await buildDistributedGateway(config);
    await built.keys.create('test', key);
    // A verify worker's backend and work, as services/verify-worker/src/main.ts composes them; the
    // batch worker without the process runtime (no probe port), the dispatcher a recording one.
    const logger = createLogger('silent', 'test-list-worker');
    const worker = createDistributedBackend(config, { process: 'verify-worker', logger, dispatcher });
    const work = createVerifyWork(worker, { registry: new Registry(), logger });
    worker.workLists(work.lists, { janitorIntervalMs: 2_000 });
    const verifyWorker: Worker = startBullWorker(work.handler, { redis: url, redisPrefix: prefix, concurrency: 4 });
    app = built.gateway.app;
    keys = built.keys;
    close = async () => {
      await app.close();
      await verifyWorker.close();
      await worker.close();
      work.close();
      for (const closer of built.closers) await closer();
      await dropPrefix(url, prefix);
    };
  }
  const baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    mode,
    baseUrl,
    key,
    keys,
    dispatcher,
    freshKey: async (freeAllowance = {}) => {
      const fresh = generateApiKey();
      await keys.create(`lists-${fresh.slice(-6)}`, fresh, freeAllowance);
      return fresh;
    },
    close,
  };
}

/** The list object as the API answers it. */
export type ListObjectBody = ListObject;

export interface ResultBody {
  email: string;
  verdict: string;
  reason: string;
  score: number;
  didYouMean?: string;
}

export async function createList(server: ListServer, key: string, body: Record<string, unknown>) {
  return call(server, '/v1/email-verify/lists', {
    key,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

export async function getList(server: Pick<ListServer, 'baseUrl'>, key: string, id: string): Promise<ListObjectBody> {
  const response = await call(server, `/v1/email-verify/lists/${id}`, { key });
  if (response.status !== 200) throw new Error(`GET list ${id}: ${response.status} ${response.text}`);
  return response.json() as ListObjectBody;
}

/** Polls until the list has one of `statuses`. */
export async function waitForStatus(
  server: Pick<ListServer, 'baseUrl'>,
  key: string,
  id: string,
  statuses: string[],
  timeoutMs = 20_000,
): Promise<ListObjectBody> {
  let last: ListObjectBody | undefined;
  const reached = async (): Promise<boolean> => {
    last = await getList(server, key, id);
    return statuses.includes(last.status);
  };
  await waitUntil(reached, timeoutMs, `list ${id} ${statuses.join('/')}`).catch((error: unknown) => {
    throw new Error(`list ${id} still ${last?.status} after ${timeoutMs} ms (wanted ${statuses.join('/')})`, { cause: error });
  });
  if (last === undefined) throw new Error(`list ${id} was never read`);
  return last;
}

/** A scripted mail world of several domains, each with its own SMTP server on 127.0.0.x (one port). */
export interface MultiRig {
  env: Record<string, string>;
  dns: RigDnsServer;
  servers: Record<string, RigSmtpServer>;
  close(): Promise<void>;
}

export async function startMultiRig(domains: Record<string, { host: string } & SmtpServerScript>): Promise<MultiRig> {
  const zone: Parameters<typeof startDnsServer>[0] = {};
  for (const [domain, { host }] of Object.entries(domains)) {
    zone[domain] = { MX: [[10, `mx.${domain}`]] };
    zone[`mx.${domain}`] = { A: [host] };
  }
  const dns = await startDnsServer(zone);
  const port = await findFreePort(Object.values(domains).map(({ host }) => host));
  const servers: Record<string, RigSmtpServer> = {};
  for (const [domain, script] of Object.entries(domains)) servers[domain] = await startSmtpServer({ ...script, port });
  return {
    env: { ...dns.canaryEnv, VERIFY_SMTP_PORT: String(port), VERIFY_ALLOW_PRIVATE_MX: 'true' },
    dns,
    servers,
    close: async () => void (await Promise.all([dns.close(), ...Object.values(servers).map((server) => server.close())])),
  };
}

/** What a `use...` helper started for the tests of its block; read only inside tests and hooks. */
function startedBy<T extends { close(): Promise<void> }>(what: string, start: () => Promise<T>): () => T {
  let started: T | undefined;
  beforeAll(async () => {
    started = await start();
  });
  afterAll(async () => started?.close());
  return () => {
    if (started === undefined) throw new Error(`${what} is read before its beforeAll started it`);
    return started;
  };
}

/**
 * The mail world of a test file (or describe block): started before its tests, closed after them,
 * the setup every list test file wrote out. Read `rig` inside tests, hooks and `useListServer`'s env.
 */
export function useMailRig(domains: Record<string, { host: string } & SmtpServerScript>): { readonly rig: MultiRig } {
  const rig = startedBy('the mail rig', () => startMultiRig(domains));
  return {
    get rig() {
      return rig();
    },
  };
}

/** A list server for the tests of the block it is called in, its environment read when it starts (after the mail rig). */
export function useListServer(mode: Mode, env: () => Record<string, string>): { readonly server: ListServer } {
  const server = startedBy(`the ${mode} list server`, () => startListServer(mode, env()));
  return {
    get server() {
      return server();
    },
  };
}

/** RCPT TO lines a server received, by lower-cased address. */
export function rcptCounts(server: RigSmtpServer): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of server.commands.flat()) {
    const match = /^RCPT TO:<([^>]*)>/i.exec(line);
    if (match !== null) counts.set(match[1]!.toLowerCase(), (counts.get(match[1]!.toLowerCase()) ?? 0) + 1);
  }
  return counts;
}
