/**
 * `npm run keys -- migrate-tags`: renames the keys a deployment wrote before its keys carried
 * Redis Cluster hash tags to the tagged names of this version, in place, on one Redis (RENAME
 * needs both names on one node; on a single node every name is). Run it with every gateway and
 * worker stopped, once, after the upgrade and before they start again; it is idempotent. A move
 * to a Cluster then copies the tagged keys as they are (`redis-cli --cluster import`).
 *
 * What moves: API keys and their index, webhook secrets, meters and list ledgers, lists and their
 * per-key sets, the set of unfinished lists the janitor reads, SMTP leases, and BullMQ queues
 * (each queue's keys under its tag, jobs and all). Already tagged names are left. Rate-limit windows and tool-call counts are not moved: they lapse
 * within a minute.
 */
import { LIST_ID_PATTERN } from '@svc/contracts';
import type { Redis } from '@svc/jobs/redis';

/** The janitor's set of list ids: merged into its tagged name rather than renamed (see below). */
const UNFINISHED = 'lists:{unfinished}';

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The tagged name of an untagged key of this deployment, or undefined (tagged, foreign, or a ledger). */
export function taggedName(prefix: string, key: string): string | undefined {
  if (!key.startsWith(`${prefix}:`)) return undefined;
  const rest = key.slice(prefix.length + 1);
  if (rest.includes('{')) return undefined;
  const rules: Array<[RegExp, (match: RegExpExecArray) => string]> = [
    [/^apikey:([0-9a-f]{64})$/, (m) => `apikey:{${m[1]}}`],
    [/^apikeys$/, () => '{apikeys}'],
    [/^webhook-secret:([^:]+)$/, (m) => `webhook-secret:{${m[1]}}`],
    [/^usage:(\d{4}-\d{2}):([^:]+)$/, (m) => `usage:{${m[2]}}:${m[1]}`],
    [new RegExp(`^list:(${LIST_ID_PATTERN})(:[a-z]+)?$`), (m) => `list:{${m[1]}}${m[2] ?? ''}`],
    [/^lists:(key|active):([^:]+)$/, (m) => `lists:${m[1]}:{${m[2]}}`],
    [/^lists:unfinished$/, () => UNFINISHED],
    [/^smtp-(slots|waiting):(.+)$/, (m) => `smtp-${m[1]}:{${m[2]}}`],
    [/^bull:([^:]+):(.+)$/, (m) => `bull:{${m[1]}}:${m[1]}:${m[2]}`],
  ];
  for (const [pattern, rename] of rules) {
    const match = pattern.exec(rest);
    if (match !== null) return `${prefix}:${rename(match)}`;
  }
  return undefined;
}

/** An untagged list ledger (`<p>:ledger:list:<id>`): its tag is the list's key id, read from the list. */
const ledgerOf = (prefix: string, key: string): string | undefined =>
  new RegExp(`^${escape(prefix)}:ledger:(list:${LIST_ID_PATTERN})$`).exec(key)?.[1];

export interface MigrationOutcome {
  renamed: number;
  /** Names whose tagged name already existed (both kept: an operator decides). */
  conflicts: string[];
  /** Ledgers whose list is gone (left as they are). */
  orphanLedgers: string[];
}

async function* scan(redis: Redis, prefix: string): AsyncGenerator<string> {
  if ('nodes' in redis)
    throw new Error('migrate-tags renames keys on one Redis: run it against the single node before moving to a cluster');
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1_000);
    cursor = next;
    yield* keys;
  } while (cursor !== '0');
}

export async function migrateTags(redis: Redis, prefix: string): Promise<MigrationOutcome> {
  const outcome: MigrationOutcome = { renamed: 0, conflicts: [], orphanLedgers: [] };
  const ledgers: Array<[string, string]> = [];
  // Collected first: renaming while a SCAN runs could return a renamed key twice.
  const keys: string[] = [];
  for await (const key of scan(redis, prefix)) keys.push(key);
  const rename = async (from: string, to: string) => {
    if ((await redis.renamenx(from, to)) === 1) outcome.renamed += 1;
    else outcome.conflicts.push(from);
  };
  // A set of ids loses nothing by a union: one an upgraded process already wrote (started before
  // this ran) is no conflict for an operator, and no list's end is forgotten by the janitor.
  const merge = async (from: string, to: string) => {
    await redis.multi().sunionstore(to, to, from).del(from).exec();
    outcome.renamed += 1;
  };
  for (const key of keys) {
    const ledger = ledgerOf(prefix, key);
    if (ledger !== undefined) ledgers.push([key, ledger]);
    const to = taggedName(prefix, key);
    if (to === `${prefix}:${UNFINISHED}`) await merge(key, to);
    else if (to !== undefined) await rename(key, to);
  }
  // After the lists moved, so that their records are found under their tagged names.
  for (const [key, ledger] of ledgers) {
    const listId = ledger.slice('list:'.length);
    const keyId = await redis.hget(`${prefix}:list:{${listId}}`, 'keyId');
    if (keyId === null) outcome.orphanLedgers.push(key);
    else await rename(key, `${prefix}:ledger:{${keyId}}:${ledger}`);
  }
  return outcome;
}
