/**
 * Real processes for the operations tests: services run as `node --import tsx <file>` and binaries
 * (Prometheus, the Redis exporter) directly, each in its own process group so that stopping it
 * stops its whole tree, and nothing outlives the test file.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

export interface Service {
  child: ChildProcess;
  /** Everything the process wrote, for failure messages. */
  output: () => string;
  /** Sends a signal to the whole process group (SIGSTOP/SIGCONT freeze and thaw it). */
  signal: (signal: NodeJS.Signals) => void;
  /** SIGTERM to the process group, SIGKILL after `graceMs`; resolves when it exited. */
  stop: (graceMs?: number) => Promise<void>;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export function spawnProcess(command: string, args: string[], env: Record<string, string> = {}): Service {
  const child = spawn(command, args, { env: { ...process.env, ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, signal);
    } catch {
      // The group is already gone.
    }
  };
  return {
    child,
    output: () => output,
    signal: signalGroup,
    stop: async (graceMs = 5_000) => {
      signalGroup('SIGTERM');
      // A frozen process only acts on SIGTERM once thawed.
      signalGroup('SIGCONT');
      const timer = setTimeout(() => signalGroup('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
      // Anything the process started and left behind in its group.
      signalGroup('SIGKILL');
    },
  };
}

/** One of the product's processes, from its TypeScript entry point. */
export function spawnService(file: string, env: Record<string, string>): Service {
  return spawnProcess(process.execPath, ['--import', 'tsx', file], env);
}

/** Fails with the way to install a missing binary instead of an ENOENT deep in a test. */
export function requireBinary(name: string, install: string): void {
  const found = spawnSync(name, ['--version'], { encoding: 'utf8' });
  if (found.error !== undefined || found.status !== 0)
    throw new Error(`\`${name}\` is not installed or does not run (${found.error?.message ?? found.stderr}). Install it: ${install}`);
}
