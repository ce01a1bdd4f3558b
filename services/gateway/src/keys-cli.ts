/**
 * Key administration against Redis (`npm run keys -- <command>`). A key is shown once, at
 * creation; only its SHA-256 digest is stored. Each key also gets a webhook secret that signs its
 * list callbacks, shown once at creation and again only as a new one when rotated.
 *
 * Revoking a key deletes its history (decisions, "Learning from sends", privacy: "deleting a key
 * deletes its history"). A revoked key never authenticates again, so the feedback and verification
 * history stored for it could never serve an answer; kept, it would only be personal data without
 * a purpose. The revoked record itself stays listed: the month's usage and invoices name it.
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '@svc/config';
import { OPERATION_IDS, type OperationId } from '@svc/contracts';
import { redisFeedback } from '@svc/feedback/redis';
import { createRedis, waitForRedis } from '@svc/jobs/redis';
import { WebhookSecretStore } from '@svc/webhooks/secrets';
import { generateApiKey } from './auth/api-keys.ts';
import { migrateTags } from './stores/migrate-tags.ts';
import { RedisKeyStore } from './stores/redis-key-store.ts';

const USAGE = `usage: npm run keys -- <command>
  create --name NAME [--free OPERATION=CALLS ...]   issue a key and its webhook secret (both printed once)
  list                                               list keys (id, name, created, revoked, allowances)
  revoke ID_OR_NAME                                  revoke a key: it stops authenticating, and its feedback and
                                                     verification history is erased (cannot be undone)
  allowance ID_OR_NAME OPERATION CALLS|default       set or clear a free-allowance override
  webhook-secret ID_OR_NAME                          replace a key's webhook secret (the new one printed once)
  migrate-tags                                       rename keys written before this version to their Redis Cluster hash-tagged names
                                                     (one Redis, every gateway and worker stopped; idempotent)
operations: ${OPERATION_IDS.join(', ')}
needs the deployment's Redis: REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS (and REDIS_PREFIX when it sets one)`;

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
  if (config.redis === undefined)
    throw new Error(
      'No Redis configured (REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS): keys live in Redis (embedded mode takes API_KEYS instead).',
    );
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { name: { type: 'string' }, free: { type: 'string', multiple: true } },
  });
  const [command, ...rest] = positionals;
  const redis = createRedis(config.redis, 'request', 'keys-cli');
  try {
    await waitForRedis(redis, 5_000);
    const store = new RedisKeyStore(redis, config.REDIS_PREFIX);
    const secrets = new WebhookSecretStore(redis, config.REDIS_PREFIX);
    switch (command) {
      case 'create': {
        if (values.name === undefined || values.name === '') throw new Error('create needs --name');
        const key = generateApiKey();
        const record = await store.create(values.name, key, parseAllowances(values.free ?? []));
        const secret = await secrets.rotate(record.id);
        return [
          key,
          `webhook secret: ${secret}`,
          `(id ${record.id}, name ${record.name}; store the key and the webhook secret now: they are not shown again)`,
        ].join('\n');
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
        const matching = (await store.list()).filter((key) => key.id === target || key.name === target);
        if (matching.length === 0) throw new Error(`no key with id or name ${target}`);
        const feedback = redisFeedback(redis, config.REDIS_PREFIX, config);
        for (const record of matching) {
          // Revoked first: a key still in use could write history again after its erasure.
          await store.revoke(record.id);
          await feedback.deleteKey(record.id);
        }
        const pooled =
          config.FEEDBACK_SCOPE === 'deployment'
            ? '\n(FEEDBACK_SCOPE=deployment: what the key reported was pooled with every key and stays in the pool)'
            : '';
        return `revoked ${matching.length} key(s) (${matching.map((key) => key.id).join(', ')}): their feedback and verification history erased${pooled}`;
      }
      case 'allowance': {
        const [target, operation, calls] = rest;
        if (target === undefined || operation === undefined || !isOperation(operation) || calls === undefined) throw new Error(USAGE);
        const count = await store.setAllowance(target, operation, calls === 'default' ? null : Number.parseInt(calls, 10));
        if (count === 0) throw new Error(`no key with id or name ${target}`);
        return `updated ${count} key(s)`;
      }
      case 'webhook-secret': {
        const target = rest[0];
        if (target === undefined) throw new Error('webhook-secret needs an id or a name');
        const matches = (await store.list()).filter((key) => key.id === target || key.name === target);
        if (matches.length === 0) throw new Error(`no key with id or name ${target}`);
        // Names are not unique, and each key must get a secret of its own: ask which one.
        if (matches.length > 1) throw new Error(`${matches.length} keys are named ${target}: give the id (npm run keys -- list)`);
        const record = matches[0]!;
        if (record.revoked) throw new Error(`key ${record.id} is revoked`);
        const secret = await secrets.rotate(record.id);
        return `${secret}\n(new webhook secret of key ${record.id}, name ${record.name}; it signs from the next callback attempt on and the previous one no longer does; store it now: it is not shown again)`;
      }
      case 'migrate-tags': {
        const outcome = await migrateTags(redis, config.REDIS_PREFIX);
        const notes = [
          ...outcome.conflicts.map((key) => `left ${key}: its tagged name exists already`),
          ...outcome.orphanLedgers.map((key) => `left ${key}: its list is gone`),
        ];
        return [`renamed ${outcome.renamed} key(s) to their hash-tagged names`, ...notes].join('\n');
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
