/**
 * Child processes of tests and benchmarks: `node` started directly (no npm, shell or tsx wrapper
 * between), as the leader of a process group of its own, so that stopping the group stops
 * everything it started. Each one is written to the run's process log (when the test run has
 * one), which the global teardown reads to fail a run that left anything alive.
 */
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';

/** Set by the global setup: a file where every spawned process is recorded as `pid script`. */
export const PROCESS_LOG_ENV = 'SVC_TEST_PROCESS_LOG';

export interface NodeProcessOptions {
  env?: Record<string, string | undefined>;
  args?: string[];
  /** Default: stdin ignored, stdout piped, stderr inherited. */
  stdio?: StdioOptions;
}

/** Runs a TypeScript entry point with `node --import tsx`, in its own process group. */
export function spawnNode(script: string, options: NodeProcessOptions = {}): ChildProcess {
  return spawnTracked(['--import', 'tsx', script], script, options);
}

/** Runs a built file as production does: `node --conditions=production`, in its own process group. */
export function spawnNodeBuilt(file: string, options: NodeProcessOptions = {}): ChildProcess {
  return spawnTracked(['--conditions=production', '--enable-source-maps', file], file, options);
}

function spawnTracked(nodeArgs: string[], script: string, options: NodeProcessOptions): ChildProcess {
  const child = spawn(process.execPath, [...nodeArgs, ...(options.args ?? [])], {
    env: options.env ?? process.env,
    stdio: options.stdio ?? ['ignore', 'pipe', 'inherit'],
    detached: true,
  });
  const log = process.env[PROCESS_LOG_ENV];
  if (log !== undefined && child.pid !== undefined) appendFileSync(log, `${child.pid} ${script}\n`);
  return child;
}

/** A TCP port free on 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
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
 * Stops a process and everything it started: `signal` to the group, SIGKILL to the group after
 * `graceMs`, and SIGKILL again once the leader is gone for whatever it left behind. Resolves with
 * the leader's exit code (null when it died of a signal).
 */
export async function stopProcessTree(
  child: ChildProcess,
  options: { signal?: NodeJS.Signals; graceMs?: number } = {},
): Promise<number | null> {
  const pid = child.pid;
  if (pid === undefined) return child.exitCode;
  const exited = child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : once(child, 'exit');
  signalGroup(pid, options.signal ?? 'SIGTERM');
  const hardStop = setTimeout(() => signalGroup(pid, 'SIGKILL'), options.graceMs ?? 5_000);
  await exited;
  clearTimeout(hardStop);
  signalGroup(pid, 'SIGKILL');
  return child.exitCode;
}

/** Resolves with the leader's exit code once it exits by itself. */
export async function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const [code] = (await once(child, 'exit')) as [number | null];
  return code;
}
