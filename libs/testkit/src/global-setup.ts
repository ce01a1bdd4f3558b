/**
 * Once per test run: find the Redis every file shares, open the run's process log, and start the
 * production build in the background (run-build.ts). At the end, any process a test spawned (see
 * processes.ts) that is still alive is killed and fails the run: a suite must stop everything it
 * starts. A build still running then (a short run) is stopped.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { findRedis } from './find-redis.ts';
import { PROCESS_LOG_ENV, isAlive, signalGroup } from './processes.ts';
import { BUILD_STATE_ENV } from './run-build.ts';

/**
 * `npm run build:emit` in a process group of its own; its state file is written when it exits.
 * Started again when watch mode reruns tests: a build from before an edit must not serve after it.
 */
function backgroundBuild(directory: string): { restart: () => Promise<void>; stop: () => Promise<void> } {
  const state = join(directory, 'build-state');
  const log = join(directory, 'build.log');
  // Test workers are forked after this and inherit it.
  process.env[BUILD_STATE_ENV] = state;
  const start = () => {
    rmSync(state, { force: true });
    const output = openSync(log, 'w');
    const build = spawn('npm', ['run', 'build:emit'], { stdio: ['ignore', output, output], detached: true });
    closeSync(output);
    const exited = once(build, 'exit').then(
      ([code]) => writeFileSync(state, code === 0 ? 'ok' : `failed (exit ${String(code)}):\n${readFileSync(log, 'utf8').slice(-20_000)}`),
      (error: unknown) => writeFileSync(state, `failed to start: ${String(error)}`),
    );
    return { build, exited };
  };
  let current = start();
  const stop = async () => {
    const { build, exited } = current;
    if (build.exitCode === null && build.signalCode === null && build.pid !== undefined) signalGroup(build.pid, 'SIGKILL');
    await exited;
  };
  return {
    stop,
    restart: async () => {
      await stop();
      current = start();
    },
  };
}

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
  const build = backgroundBuild(directory);
  project.onTestsRerun(() => build.restart());

  return async () => {
    await build.stop();
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
