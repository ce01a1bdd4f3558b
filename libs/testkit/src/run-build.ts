/**
 * The production build of a test run: the global setup starts `npm run build:emit` in the
 * background, the files `npm run build` makes without checking types again (`tsc --noCheck`, 9 s
 * on a fresh clone against 15 s; `npm run typecheck` checks them, and a later `npm run build` still
 * does), incremental (a second or two when the tree is built already, as in CI). The services' child
 * processes run from it once it is done: `node --conditions=production` on their built files, as the
 * image runs them. Through tsx a process took about 0.7 s more CPU to start (its loader hooks and
 * compiling every module), and `npm test` starts some 40 of them. Until the build is done, or when
 * it failed, they run through tsx: the same sources, so no test depends on which.
 *
 * The build's state is a file named by SVC_TEST_BUILD_STATE: absent while it runs, `ok` when it
 * succeeded, `failed` and its output when not. test/process/built.test.ts waits for it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

export const BUILD_STATE_ENV = 'SVC_TEST_BUILD_STATE';

type BuildState = { kind: 'running' } | { kind: 'ok' } | { kind: 'failed'; output: string } | { kind: 'none' };

function buildState(): BuildState {
  const file = process.env[BUILD_STATE_ENV];
  if (file === undefined || file === '') return { kind: 'none' };
  if (!existsSync(file)) return { kind: 'running' };
  const text = readFileSync(file, 'utf8');
  return text === 'ok' ? { kind: 'ok' } : { kind: 'failed', output: text };
}

/** Whether the run's build is done and succeeded (so built entry points are current). */
export function runBuildReady(): boolean {
  return buildState().kind === 'ok';
}

/** Waits for the run's build; throws with its output when it failed, or when no build was started. */
export async function awaitRunBuild(timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const state = buildState();
    if (state.kind === 'ok') return;
    if (state.kind === 'failed') throw new Error(`npm run build:emit failed:\n${state.output}`);
    if (state.kind === 'none') throw new Error(`no build was started for this run (${BUILD_STATE_ENV} unset: the global setup starts it)`);
    if (Date.now() > until) throw new Error(`npm run build:emit did not finish within ${timeoutMs} ms`);
    await sleep(100);
  }
}

/** A service's entry point as built: `services/<name>/src/main.ts` and `scripts/start.ts` have one. */
export function builtEntryOf(script: string): string | undefined {
  if (/(^|\/)services\/[a-z-]+\/src\/main\.ts$/.test(script)) return script.replace(/\/src\/main\.ts$/, '/dist/main.js');
  if (/(^|\/)scripts\/start\.ts$/.test(script)) return script.replace(/start\.ts$/, 'dist/start.js');
  return undefined;
}
