/** The key tool, and the callback consumer as a process, for the tests that need keys in Redis. */
import type { ChildProcess } from 'node:child_process';
// Its own entry: the package's index is what `npm start` loads, and this one loads the Redis client.
import { runKeysCli } from '@svc/gateway/keys-cli';
import { spawnNode, testRedisUrl, waitUntil, childEnv } from '@svc/testkit';

/** What the key tool's bin ends with: its output on stdout, or a refusal on stderr with exit code 1. */
export interface KeysCliRefusal extends Error {
  code: 1;
  stderr: string;
}

/**
 * The key tool's commands against the test Redis under `prefix`, run in this process by
 * `runKeysCli`, the function its bin runs: a process of its own cost about 0.6 s of CPU per command,
 * and these tests run dozens. test/process/start-and-keys.test.ts runs the bin itself as a process.
 */
export function keysCli(prefix: string) {
  return async (...args: string[]): Promise<{ stdout: string }> => {
    try {
      return { stdout: `${await runKeysCli(args, { REDIS_URL: testRedisUrl(), REDIS_PREFIX: prefix })}\n` };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const refusal: KeysCliRefusal = Object.assign(new Error(`keys ${args.join(' ')}: ${message}`), {
        code: 1 as const,
        stderr: `${message}\n`,
      });
      throw refusal;
    }
  };
}

export interface CreatedKey {
  key: string;
  id: string;
  webhookSecret: string;
}

/** `keys create` output: the key, its webhook secret, and the id in the closing note. */
export function parseCreated(stdout: string): CreatedKey {
  const key = /^sk_[A-Za-z0-9]{32}$/m.exec(stdout)?.[0];
  const webhookSecret = /^webhook secret: (whsec_[A-Za-z0-9]{40})$/m.exec(stdout)?.[1];
  const id = /\(id ([0-9a-f]{16}),/.exec(stdout)?.[1];
  if (key === undefined || webhookSecret === undefined || id === undefined) throw new Error(`unexpected keys create output: ${stdout}`);
  return { key, id, webhookSecret };
}

export interface ConsumerProcess {
  child: ChildProcess;
  output: () => string;
  /** The consumer's JSON log lines. */
  logs: () => Array<Record<string, unknown>>;
}

export async function startConsumerProcess(
  prefix: string,
  timing: { firstDelayMs: number; maxDelayMs: number; attemptTimeoutMs: number; lockDurationMs: number },
): Promise<ConsumerProcess> {
  const child = spawnNode('test/callbacks/fixtures/callback-consumer.ts', {
    env: childEnv({ REDIS_URL: testRedisUrl(), REDIS_PREFIX: prefix, LIST_ALLOW_PRIVATE_CALLBACKS: 'true', LOG_LEVEL: 'info' }),
    args: [timing.firstDelayMs, timing.maxDelayMs, timing.attemptTimeoutMs, timing.lockDurationMs].map(String),
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await waitUntil(() => output.includes('callback consumer ready'), 20_000, 'the callback consumer to start');
  return {
    child,
    output: () => output,
    logs: () =>
      output
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}
