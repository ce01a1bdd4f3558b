/**
 * Child processes of tests and benchmarks: `node` started directly (no npm, shell or tsx wrapper
 * between) or a binary, each as the leader of a process group of its own, so that stopping the
 * group stops everything it started. Each one is written to the run's process log (when the test
 * run has one), which the global teardown reads to fail a run that left anything alive.
 */
import { spawn, spawnSync, type ChildProcess, type StdioOptions } from 'node:child_process';
import { once } from 'node:events';
import { appendFileSync, readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { builtEntryOf, runBuildReady } from './run-build.ts';

/** Set by the global setup: a file where every spawned process is recorded as `pid label`. */
export const PROCESS_LOG_ENV = 'SVC_TEST_PROCESS_LOG';

export interface NodeProcessOptions {
  env?: Record<string, string | undefined>;
  args?: string[];
  /** Default: this process's working directory. */
  cwd?: string;
  /** Default: stdin ignored, stdout piped, stderr inherited. */
  stdio?: StdioOptions;
}

/**
 * Runs a TypeScript entry point in its own process group: a service's built entry point once the
 * run's build is done (see run-build.ts), else the source with `node --import tsx`.
 */
export function spawnNode(script: string, options: NodeProcessOptions = {}): ChildProcess {
  const built = builtEntryOf(script);
  if (built !== undefined && runBuildReady()) return spawnNodeBuilt(built, options);
  return spawnTracked(process.execPath, ['--import', 'tsx', script], script, options);
}

/** Runs a built file as production does: `node --conditions=production`, in its own process group. */
export function spawnNodeBuilt(file: string, options: NodeProcessOptions = {}): ChildProcess {
  return spawnTracked(process.execPath, ['--conditions=production', '--enable-source-maps', file], file, options);
}

/** Runs a binary (Prometheus, redis-server, ...) in its own process group. */
export function spawnCommand(command: string, args: string[], options: Omit<NodeProcessOptions, 'args'> = {}): ChildProcess {
  return spawnTracked(command, args, command, options);
}

function spawnTracked(command: string, args: string[], label: string, options: NodeProcessOptions): ChildProcess {
  const child = spawn(command, [...args, ...(options.args ?? [])], {
    env: options.env ?? process.env,
    cwd: options.cwd,
    stdio: options.stdio ?? ['ignore', 'pipe', 'inherit'],
    detached: true,
  });
  const log = process.env[PROCESS_LOG_ENV];
  if (log !== undefined && child.pid !== undefined) appendFileSync(log, `${child.pid} ${label}\n`);
  return child;
}

/** Sends a signal to every process of the group led by `pid`; a group already gone is fine. */
export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: nothing left in the group.
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Stops a process and everything it started: `signal` to the group (and SIGCONT, since a frozen
 * process acts on it only once thawed), SIGKILL to the group after `graceMs`, and SIGKILL again
 * once the leader is gone for whatever it left behind. Resolves with the leader's exit code (null
 * when it died of a signal).
 */
export async function stopProcessTree(
  child: ChildProcess,
  options: { signal?: NodeJS.Signals; graceMs?: number } = {},
): Promise<number | null> {
  const pid = child.pid;
  if (pid === undefined) return child.exitCode;
  const exited = exitOf(child);
  signalGroup(pid, options.signal ?? 'SIGTERM');
  signalGroup(pid, 'SIGCONT');
  const hardStop = setTimeout(() => signalGroup(pid, 'SIGKILL'), options.graceMs ?? 5_000);
  const code = await exited;
  clearTimeout(hardStop);
  signalGroup(pid, 'SIGKILL');
  return code;
}

/** Resolves with the leader's exit code once it exits by itself. */
export async function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const [code] = (await once(child, 'exit')) as [number | null];
  return code;
}

/** A spawned process with its output kept (the last 20 kB, stdout and stderr) for failure messages. */
export interface ServiceProcess {
  child: ChildProcess;
  output: () => string;
  /** Sends a signal to the whole process group (SIGSTOP/SIGCONT freeze and thaw it). */
  signal: (signal: NodeJS.Signals) => void;
  /** SIGTERM to the process group, SIGKILL after `graceMs`; resolves when it exited. */
  stop: (graceMs?: number) => Promise<void>;
}

export function asService(child: ChildProcess): ServiceProcess {
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return {
    child,
    output: () => output,
    signal: (signal) => child.pid !== undefined && signalGroup(child.pid, signal),
    stop: async (graceMs = 5_000) => void (await stopProcessTree(child, { graceMs })),
  };
}

/**
 * Variables that choose the product's mode and its Redis. A test says which mode it starts, so a
 * `REDIS_URL` pointing the test run at a Redis never turns an embedded product distributed.
 */
const MODE_VARIABLES = [
  'REDIS_URL',
  'REDIS_CLUSTER_NODES',
  'REDIS_SENTINELS',
  'REDIS_SENTINEL_MASTER',
  'REDIS_USERNAME',
  'REDIS_PASSWORD',
  'REDIS_TLS',
  'REDIS_PREFIX',
  'API_KEYS',
];

/**
 * The environment of a child process: this one's, less the mode's variables, plus `env`. A
 * gateway's /metrics listener takes a free port unless `env` names one: its default, 9102, would
 * be taken by whichever gateway of the parallel test files started first.
 */
export function childEnv(env: Record<string, string | undefined> = {}): Record<string, string> {
  const merged: Record<string, string | undefined> = { ...process.env, GATEWAY_METRICS_PORT: '0' };
  for (const name of MODE_VARIABLES) delete merged[name];
  Object.assign(merged, env);
  return Object.fromEntries(Object.entries(merged).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

/** One of the product's processes from its TypeScript entry point, output kept. */
export function startService(file: string, env: Record<string, string>): ServiceProcess {
  return asService(spawnNode(file, { env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] }));
}

/** A binary, output kept. */
export function startBinary(command: string, args: string[], env: Record<string, string> = {}): ServiceProcess {
  return asService(spawnCommand(command, args, { env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] }));
}

/** Fails with the way to install a missing binary instead of an ENOENT deep in a test. */
export function requireBinary(name: string, install: string): void {
  const found = spawnSync(name, ['--version'], { encoding: 'utf8' });
  if (found.error !== undefined || found.status !== 0)
    throw new Error(`\`${name}\` is not installed or does not run (${found.error?.message ?? found.stderr}). Install it: ${install}`);
}

/** The lowest port the kernel picks for outgoing connections and `listen(0)`: Linux's range, or its default. */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isSafeInteger(low)) return low;
  } catch {
    // Not Linux: assume its default.
  }
  return 32_768;
}

const PICK_FROM = 20_000;
/** Slice 0 for a process outside vitest (a benchmark), then one per vitest worker (VITEST_POOL_ID is 1..maxWorkers). */
const SLICES = 9;
let nextPick: number | undefined;

async function listensOn(port: number): Promise<boolean> {
  const server = createServer();
  const bound = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (bound) await new Promise<void>((resolve) => server.close(() => resolve()));
  return bound;
}

/**
 * A TCP port free on 127.0.0.1 right now, for a process started next to listen on. A port the
 * kernel picked (`listen(0)`) could be taken again before that process listens, by a client
 * socket or a `listen(0)` of a test running beside (a worker then died of EADDRINUSE). So the
 * port is picked below the kernel's ephemeral range, from a slice of its own for each vitest
 * worker, never twice by one process, and checked free.
 */
export async function freePort(): Promise<number> {
  const size = Math.floor((ephemeralLow() - PICK_FROM) / SLICES);
  if (size < 100) return kernelPickedPort();
  const pool = Number(process.env.VITEST_POOL_ID ?? 0);
  const start = PICK_FROM + (Number.isSafeInteger(pool) ? pool % SLICES : 0) * size;
  nextPick ??= Math.floor(Math.random() * size);
  for (let tries = 0; tries < size; tries++) {
    const port = start + (nextPick++ % size);
    if (await listensOn(port)) return port;
  }
  return kernelPickedPort();
}

async function kernelPickedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
