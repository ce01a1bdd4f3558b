/**
 * `npm run bench:startup`: the embedded gateway from the TypeScript sources (tsx, what `npm start`
 * runs) against the built files (`node --conditions=production`, what the image runs), runs
 * interleaved: time from spawn to the first 200 on /healthz, and resident memory after
 * BENCH_IDLE_S seconds idle (read from /proc). Medians with min-max over BENCH_RUNS pairs.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { freePort, spawnNode, spawnNodeBuilt, stopProcessTree, childEnv } from '@svc/testkit';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const IDLE_S = Number(process.env.BENCH_IDLE_S ?? 5);

const rssMb = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

async function measure(start: (env: NodeJS.ProcessEnv) => ChildProcess): Promise<{ serveMs: number; rssMb: number }> {
  const port = await freePort();
  const started = performance.now();
  const child = start(childEnv({ REDIS_URL: '', PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' }));
  try {
    for (;;) {
      const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (response) => response.ok,
        () => false,
      );
      if (ok) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const serveMs = performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, IDLE_S * 1_000));
    return { serveMs, rssMb: rssMb(child.pid!) };
  } finally {
    await stopProcessTree(child);
  }
}

const summary = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return `${sorted[Math.floor(sorted.length / 2)]!.toFixed(0)} (${sorted[0]!.toFixed(0)}-${sorted.at(-1)!.toFixed(0)})`;
};

execFileSync('npm', ['run', 'build'], { stdio: 'inherit' });
const setups = {
  'tsx (npm start)': (env: NodeJS.ProcessEnv) => spawnNode('scripts/start.ts', { env, stdio: 'ignore' }),
  'built (node dist)': (env: NodeJS.ProcessEnv) => spawnNodeBuilt('scripts/dist/start.js', { env, stdio: 'ignore' }),
};
const results: Record<string, Array<{ serveMs: number; rssMb: number }>> = {};
for (let run = 0; run < RUNS; run += 1) {
  for (const [name, start] of Object.entries(setups)) (results[name] ??= []).push(await measure(start));
}
console.log(`embedded gateway, ${RUNS} interleaved runs each, RSS after ${IDLE_S} s idle: median (min-max)`);
console.table(
  Object.entries(results).map(([setup, runs]) => ({
    setup,
    'serve ms': summary(runs.map((r) => r.serveMs)),
    'RSS MB': summary(runs.map((r) => r.rssMb)),
  })),
);
