/**
 * Once per test run: find the Redis every file shares, and open the run's process log. At the
 * end, any process a test spawned (see processes.ts) that is still alive is killed and fails the
 * run: a suite must stop everything it starts.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { findRedis } from './find-redis.ts';
import { PROCESS_LOG_ENV, isAlive, signalGroup } from './processes.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
  }
}

/** A pid may be reused once its process is gone: a survivor must still run the same script. */
function commandLineOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const redis = await findRedis();
  console.log(`[tests] Redis from ${redis.source}: ${redis.url}`);
  project.provide('redisUrl', redis.url);

  const directory = mkdtempSync(join(tmpdir(), 'svc-tests-'));
  const log = join(directory, 'processes.log');
  writeFileSync(log, '');
  // Test workers are forked after this and inherit it.
  process.env[PROCESS_LOG_ENV] = log;

  return async () => {
    await redis.stop();
    const survivors = readFileSync(log, 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => ({ pid: Number(line.split(' ')[0]), script: line.slice(line.indexOf(' ') + 1) }))
      .filter(({ pid, script }) => isAlive(pid) && commandLineOf(pid).includes(script));
    for (const { pid } of survivors) signalGroup(pid, 'SIGKILL');
    rmSync(directory, { recursive: true, force: true });
    if (survivors.length > 0) {
      // vitest reports an error thrown here but keeps its exit code: set it ourselves.
      process.exitCode = 1;
      throw new Error(
        `tests left ${survivors.length} process(es) running (now killed): ${survivors.map((s) => `${s.pid} ${s.script}`).join(', ')}`,
      );
    }
  };
}
