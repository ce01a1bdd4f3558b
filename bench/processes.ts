/**
 * Helpers for benchmarks: start the product's real processes (testkit's process helpers: `node
 * --import tsx <file>`, each in its own process group, stopped as whole trees), wait until they
 * answer, and read the CPU time of a process tree from /proc.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { spawnNode, childEnv } from '@svc/testkit';

export { freePort, stopProcessTree as stopProcess } from '@svc/testkit';

/**
 * Starts `node --import tsx <script>` with the product's own defaults (LOG_LEVEL info unless the
 * environment says otherwise: logging is part of what a request costs). Standard output, where
 * the logs go, is discarded; standard error is shown.
 */
export function startProcess(script: string, env: Record<string, string>): ChildProcess {
  return spawnNode(script, { env: childEnv({ ...env }), stdio: ['ignore', 'ignore', 'inherit'] });
}

export async function waitForOk(url: string, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const status = await fetch(url).then(
      (response) => response.status,
      () => 0,
    );
    if (status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`);
}

const CLOCK_TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

interface ProcStat {
  parent: number;
  /** utime + stime + cutime + cstime: the process's own CPU and that of its waited-for children. */
  ticks: number;
}

/** /proc/<pid>/stat, or undefined when the process is gone. The command name may hold spaces: fields follow its last `)`. */
function procStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state): parent is field 4, utime..cstime are fields 14..17.
  const ticks = [11, 12, 13, 14].reduce((sum, index) => sum + Number(fields[index]), 0);
  return { parent: Number(fields[1]), ticks };
}

/** CPU seconds used so far by a process and all its descendants (threads included). */
export function processTreeCpuSeconds(root: number): number {
  const children = new Map<number, number[]>();
  const stats = new Map<number, ProcStat>();
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    const stat = procStat(pid);
    if (stat === undefined) continue;
    stats.set(pid, stat);
    children.set(stat.parent, [...(children.get(stat.parent) ?? []), pid]);
  }
  let ticks = 0;
  const pending = [root];
  while (pending.length > 0) {
    const pid = pending.pop()!;
    ticks += stats.get(pid)?.ticks ?? 0;
    pending.push(...(children.get(pid) ?? []));
  }
  return ticks / CLOCK_TICKS_PER_SECOND;
}

/** The command name of a process (`comm`), or undefined when there is no such process here. */
export function processName(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return undefined;
  }
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export function printTable(rows: Array<Record<string, string | number>>): void {
  console.table(rows);
}
