/**
 * The product as real processes for the end-to-end list tests: embedded mode (`scripts/start.ts`,
 * one process) or distributed mode (the gateway and a verify-worker over the test Redis, under a
 * prefix of their own), and the `verify-list` client as a process of its own, run as users run
 * its bin.
 */
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { generateApiKey } from '@svc/gateway';
import {
  dropPrefix,
  freePort,
  spawnCommand,
  spawnNode,
  stopProcessTree,
  testRedisUrl,
  uniquePrefix,
  waitUntil,
  childEnv,
} from '@svc/testkit';
import { generateWebhookSecret } from '@svc/webhooks/secrets';
import { keysCli, parseCreated } from '../callbacks/support.ts';

const ROOT = join(import.meta.dirname, '..', '..');
export const CLIENT_BIN = join(ROOT, 'clients', 'verify-list', 'bin', 'verify-list.js');

export interface Product {
  baseUrl: string;
  key: string;
  /** What signs the key's list callbacks: LIST_WEBHOOK_SECRET (embedded), the key tool's secret for the key (distributed). */
  webhookSecret: string;
  /** Distributed mode: the Redis prefix of this product. */
  prefix?: string;
  /** Everything the processes printed, for failure messages. */
  output(): string;
  /** Stops the gateway (and, with `restart`, starts it again on the same port). */
  stopGateway(): Promise<void>;
  startGateway(): Promise<void>;
  close(): Promise<void>;
}

function collect(child: ChildProcess, into: { text: string }): void {
  const keep = (chunk: Buffer) => void (into.text = (into.text + chunk.toString()).slice(-50_000));
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
}

async function ready(baseUrl: string): Promise<void> {
  await waitUntil(async () => (await fetch(`${baseUrl}/readyz`).catch(() => undefined))?.status === 200, 30_000, `${baseUrl} to be ready`);
}

const BASE_ENV = { LOG_LEVEL: 'warn', HOST: '127.0.0.1' };

/** Embedded mode: `node --import tsx scripts/start.ts` with one key from API_KEYS and LIST_WEBHOOK_SECRET set. */
export async function startEmbeddedProduct(env: Record<string, string>): Promise<Product> {
  const key = generateApiKey();
  const webhookSecret = generateWebhookSecret();
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const log = { text: '' };
  let gateway: ChildProcess | undefined;
  const start = async () => {
    gateway = spawnNode('scripts/start.ts', {
      env: childEnv({ ...BASE_ENV, ...env, API_KEYS: key, LIST_WEBHOOK_SECRET: webhookSecret, PORT: String(port) }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    collect(gateway, log);
    await ready(baseUrl);
  };
  const stop = async () => {
    if (gateway !== undefined) await stopProcessTree(gateway);
    gateway = undefined;
  };
  await start();
  return { baseUrl, key, webhookSecret, output: () => log.text, stopGateway: stop, startGateway: start, close: stop };
}

/** Distributed mode: the gateway and one verify-worker over the test Redis; the key and its webhook secret from the key tool. */
export async function startDistributedProduct(env: Record<string, string>): Promise<Product> {
  const url = testRedisUrl();
  const prefix = uniquePrefix('lists-e2e');
  const { key, webhookSecret } = parseCreated((await keysCli(prefix)('create', '--name', 'e2e')).stdout);
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const log = { text: '' };
  const common = childEnv({ ...BASE_ENV, ...env, REDIS_URL: url, REDIS_PREFIX: prefix });
  const worker = spawnNode('services/verify-worker/src/main.ts', {
    // Port 0: a port picked beforehand could be the one picked for the gateway, whose /readyz the worker would then answer.
    env: { ...common, WORKER_METRICS_PORT: '0', WORKER_METRICS_HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  collect(worker, log);
  let gateway: ChildProcess | undefined;
  const startGateway = async () => {
    gateway = spawnNode('services/gateway/src/main.ts', { env: { ...common, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
    collect(gateway, log);
    await ready(baseUrl);
  };
  const stopGateway = async () => {
    if (gateway !== undefined) await stopProcessTree(gateway);
    gateway = undefined;
  };
  await startGateway();
  return {
    baseUrl,
    key,
    webhookSecret,
    prefix,
    output: () => log.text,
    stopGateway,
    startGateway,
    close: async () => {
      await stopGateway();
      await stopProcessTree(worker);
      await dropPrefix(url, prefix);
    },
  };
}

export interface ClientRun {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code once the client exits. */
  exited: Promise<number | null>;
}

/** `node clients/verify-list/bin/verify-list.js <args>`, in a process group of its own, as a shell would start it. */
export function startClient(args: string[], env: Record<string, string>): ClientRun {
  const out = { text: '' };
  const err = { text: '' };
  const child = spawnCommand(process.execPath, [CLIENT_BIN, ...args], {
    env: childEnv({ ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // `close`, not `exit`: every byte the client wrote has been read by then.
  const exited = new Promise<number | null>((resolve) => child.once('close', (code: number | null) => resolve(code)));
  child.stdout?.on('data', (chunk: Buffer) => void (out.text += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => void (err.text += chunk.toString()));
  return { child, stdout: () => out.text, stderr: () => err.text, exited };
}

export async function runClient(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const run = startClient(args, env);
  const code = await run.exited;
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}
