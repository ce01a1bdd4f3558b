/**
 * The distributed product as real processes on one of the Redis topologies of
 * `@svc/testkit`'s redis-topologies: the key tool, the gateway, a qr-worker and a verify-worker,
 * each with its pino lines kept with the time they were written, and each one's /readyz.
 */
import { execFile, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { childEnv, freePort, spawnNode, stopProcessTree, uniquePrefix, waitUntil } from '@svc/testkit';
import { parseCreated, type CreatedKey } from '../callbacks/support.ts';

const run = promisify(execFile);

export interface LoggedProcess {
  name: string;
  child: ChildProcess;
  /** `/readyz` of this process. */
  readyUrl: string;
  /** Every output line with the time it arrived. */
  lines: Array<{ at: number; text: string }>;
}

export interface TopologyProduct {
  baseUrl: string;
  key: CreatedKey;
  prefix: string;
  processes: LoggedProcess[];
  output(): string;
  close(): Promise<void>;
}

function logged(name: string, child: ChildProcess, readyUrl: string): LoggedProcess {
  const lines: LoggedProcess['lines'] = [];
  let pending = '';
  const keep = (chunk: Buffer) => {
    pending += chunk.toString();
    const parts = pending.split('\n');
    pending = parts.pop() ?? '';
    for (const text of parts) if (text !== '') lines.push({ at: Date.now(), text });
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return { name, child, readyUrl, lines };
}

export async function readyStatus(url: string): Promise<number> {
  return (await fetch(url, { signal: AbortSignal.timeout(3_000) }).catch(() => undefined))?.status ?? 0;
}

/** Starts the product on `redisEnv` (REDIS_CLUSTER_NODES or REDIS_SENTINELS...) with `env` on top. */
export async function startTopologyProduct(redisEnv: Record<string, string>, env: Record<string, string>): Promise<TopologyProduct> {
  const prefix = uniquePrefix('topology');
  const common = childEnv({ LOG_LEVEL: 'warn', HOST: '127.0.0.1', ...redisEnv, REDIS_PREFIX: prefix, ...env });
  const created = await run(process.execPath, ['--import', 'tsx', 'services/gateway/src/keys-cli.ts', 'create', '--name', 'topology'], {
    env: common,
    timeout: 30_000,
  });
  const key = parseCreated(created.stdout);
  const [port, qrPort, verifyPort] = [await freePort(), await freePort(), await freePort()];
  const start = (name: string, script: string, extra: Record<string, string>, readyUrl: string) =>
    logged(name, spawnNode(script, { env: { ...common, ...extra }, stdio: ['ignore', 'pipe', 'pipe'] }), readyUrl);
  const processes = [
    start('gateway', 'services/gateway/src/main.ts', { PORT: String(port) }, `http://127.0.0.1:${port}/readyz`),
    start('qr-worker', 'services/qr-worker/src/main.ts', { WORKER_METRICS_PORT: String(qrPort) }, `http://127.0.0.1:${qrPort}/readyz`),
    start(
      'verify-worker',
      'services/verify-worker/src/main.ts',
      { WORKER_METRICS_PORT: String(verifyPort) },
      `http://127.0.0.1:${verifyPort}/readyz`,
    ),
  ];
  const output = () => processes.map((p) => `--- ${p.name}\n${p.lines.map((line) => line.text).join('\n')}`).join('\n');
  const close = async () => void (await Promise.all(processes.map((p) => stopProcessTree(p.child, { graceMs: 3_000 }))));
  try {
    for (const p of processes) await waitUntil(async () => (await readyStatus(p.readyUrl)) === 200, 30_000, `${p.name} to be ready`);
  } catch (error) {
    await close();
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${output()}`);
  }
  return { baseUrl: `http://127.0.0.1:${port}`, key, prefix, processes, output, close };
}
