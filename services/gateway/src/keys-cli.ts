/**
 * Key administration against Redis (`npm run keys -- <command>`). A key is shown once, at
 * creation; only its SHA-256 digest is stored.
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '@svc/config';
import { OPERATION_IDS, type OperationId } from '@svc/contracts';
import { createRedis, waitForRedis } from '@svc/jobs/redis';
import { generateApiKey } from './auth/api-keys.ts';
import { RedisKeyStore } from './stores/redis-key-store.ts';

const USAGE = `usage: npm run keys -- <command>
  create --name NAME [--free OPERATION=CALLS ...]   issue a key (printed once)
  list                                               list keys (id, name, created, revoked, allowances)
  revoke ID_OR_NAME                                  revoke a key
  allowance ID_OR_NAME OPERATION CALLS|default       set or clear a free-allowance override
operations: ${OPERATION_IDS.join(', ')}
needs REDIS_URL (and REDIS_PREFIX when the deployment sets one)`;

const isOperation = (value: string): value is OperationId => (OPERATION_IDS as readonly string[]).includes(value);

function parseAllowances(entries: string[]): Partial<Record<OperationId, number>> {
  const out: Partial<Record<OperationId, number>> = {};
  for (const entry of entries) {
    const [operation, calls] = entry.split('=');
    if (operation === undefined || !isOperation(operation) || calls === undefined || !/^\d+$/.test(calls))
      throw new Error(`bad --free ${entry}`);
    out[operation] = Number(calls);
  }
  return out;
}

export async function runKeysCli(argv: string[], env: Record<string, string | undefined> = process.env): Promise<string> {
  const config = loadConfig(env);
  if (config.REDIS_URL === undefined) throw new Error('REDIS_URL is not set: keys live in Redis (embedded mode takes API_KEYS instead).');
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { name: { type: 'string' }, free: { type: 'string', multiple: true } },
  });
  const [command, ...rest] = positionals;
  const redis = createRedis(config.REDIS_URL, 'request', 'keys-cli');
  try {
    await waitForRedis(redis, 5_000);
    const store = new RedisKeyStore(redis, config.REDIS_PREFIX);
    switch (command) {
      case 'create': {
        if (values.name === undefined || values.name === '') throw new Error('create needs --name');
        const key = generateApiKey();
        const record = await store.create(values.name, key, parseAllowances(values.free ?? []));
        return `${key}\n(id ${record.id}, name ${record.name}; store this key now: it is not shown again)`;
      }
      case 'list': {
        const keys = await store.list();
        return (
          keys
            .map(
              (key) =>
                `${key.id}  ${key.name}  created ${key.createdAt}  ${key.revoked ? 'REVOKED' : 'active'}  ${JSON.stringify(key.freeAllowance)}`,
            )
            .join('\n') || '(no keys)'
        );
      }
      case 'revoke': {
        const target = rest[0];
        if (target === undefined) throw new Error('revoke needs an id or a name');
        const count = await store.revoke(target);
        if (count === 0) throw new Error(`no key with id or name ${target}`);
        return `revoked ${count} key(s)`;
      }
      case 'allowance': {
        const [target, operation, calls] = rest;
        if (target === undefined || operation === undefined || !isOperation(operation) || calls === undefined) throw new Error(USAGE);
        const count = await store.setAllowance(target, operation, calls === 'default' ? null : Number.parseInt(calls, 10));
        if (count === 0) throw new Error(`no key with id or name ${target}`);
        return `updated ${count} key(s)`;
      }
      default:
        throw new Error(USAGE);
    }
  } finally {
    redis.disconnect();
  }
}

// Run as a command (tsx in development, node on the built file in production), not when imported.
if (/keys-cli\.[jt]s$/.test(process.argv[1] ?? '')) {
  runKeysCli(process.argv.slice(2)).then(
    (output) => console.log(output),
    (error: unknown) => {
      console.error((error as Error).message);
      process.exitCode = 1;
    },
  );
}
