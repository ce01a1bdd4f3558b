/**
 * Real worker processes for lifecycle tests: `services/<name>/src/main.ts` started with `node`
 * in its own process group, its pino log lines parsed as they arrive. A variable given as
 * undefined is left unset (the metrics port is 0 on loopback unless a test unsets it).
 */
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { spawnNode, stopProcessTree, waitUntil, childEnv } from '@svc/testkit';

export interface LogLine {
  level: number;
  time: number;
  msg: string;
  [field: string]: unknown;
}

export interface WorkerProcess {
  name: string;
  child: ChildProcess;
  /** Every JSON log line so far, and every raw line (JSON or not). */
  lines: LogLine[];
  raw: string[];
  /** BullMQ worker ids of this process (the prefix of its job-lock tokens). */
  workerIds: string[];
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export type WorkerService = 'qr-worker' | 'verify-worker';

/** A process's standard output as it arrives: every JSON log line, and every raw line (JSON or not). */
export function collectLines(child: ChildProcess): { lines: LogLine[]; raw: string[] } {
  const lines: LogLine[] = [];
  const raw: string[] = [];
  let pending = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    pending += chunk.toString();
    const parts = pending.split('\n');
    pending = parts.pop() ?? '';
    for (const line of parts) {
      raw.push(line);
      try {
        lines.push(JSON.parse(line) as LogLine);
      } catch {
        // Not a log line: kept in `raw` only.
      }
    }
  });
  return { lines, raw };
}

export async function startWorkerProcess(
  service: WorkerService,
  name: string,
  env: Record<string, string | undefined>,
): Promise<WorkerProcess> {
  const script = fileURLToPath(new URL(`../../services/${service}/src/main.ts`, import.meta.url));
  const child = spawnNode(script, { env: childEnv({ WORKER_METRICS_PORT: '0', WORKER_METRICS_HOST: '127.0.0.1', ...env }) });
  const { lines, raw } = collectLines(child);
  const worker: WorkerProcess = {
    name,
    child,
    lines,
    raw,
    workerIds: [],
    stop: async (signal = 'SIGTERM') => void (await stopProcessTree(child, { signal })),
  };
  await waitUntil(() => lines.some((line) => line.msg === 'worker started') || child.exitCode !== null, 20_000, `${name} to start`);
  const started = lines.find((line) => line.msg === 'worker started');
  if (started === undefined) throw new Error(`${name} exited before it started: ${raw.join('\n')}`);
  worker.workerIds = started.workerIds as string[];
  return worker;
}

/** Log lines of one message, e.g. every `job started`. */
export const linesOf = (worker: WorkerProcess, msg: string): LogLine[] => worker.lines.filter((line) => line.msg === msg);
