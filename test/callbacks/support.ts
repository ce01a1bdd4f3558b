/** The key tool and the callback consumer as processes, for the callback tests. */
import { execFile, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { spawnNode, testRedisUrl, waitUntil, childEnv } from '@svc/testkit';

const run = promisify(execFile);

export function keysCli(prefix: string) {
  return (...args: string[]) =>
    run(process.execPath, ['--import', 'tsx', 'services/gateway/src/keys-cli.ts', ...args], {
      env: childEnv({ REDIS_URL: testRedisUrl(), REDIS_PREFIX: prefix }),
      timeout: 20_000,
    });
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
