/**
 * Distributed mode's feedback store. Every key of a scope carries the scope as its hash tag, so
 * that one script can move an address's standing and its domain's and scope's tallies together
 * (on a Redis Cluster they share a slot). Layout, under `<prefix>:fb:{<scope>}:`:
 * - `a:<hash>`: the address's state, a hash: b, s, d, c (counts of hard bounces, soft bounces,
 *   deliveries, complaints), lb, ld, lc, le (epoch ms of the latest of each, and of any event);
 * - `e:<hash>`: its events, a list of `at|outcome|source`, newest pushed first, 100 kept;
 * - `v:<hash>`: its verifications, a list of `at|verdict|reason|score`, 20 kept;
 * - `d:<domain hash>`: the domain's tally, d and b (distinct addresses delivered, bounced), and
 *   ca = 1 once it was found catch-all;
 * - `k`: the scope's tally over its catch-all domains, d and b.
 * Each key lives HISTORY_RETENTION_DAYS after its last write (EXPIRE on every write), and entries
 * older than that are left out when read. No address, only keyed hashes (address-hash.ts).
 */
import { readFileSync } from 'node:fs';
import type { Redis } from '@svc/jobs/redis';
import { generateHashSecret } from './address-hash.ts';
import type { Feedback } from './feedback.ts';
import { feedbackFromConfig, settingsOf, type FeedbackEnv } from './from-config.ts';
import { OUTCOMES, SOURCES, type FeedbackSource, type Outcome } from './events.ts';
import type { AddressState, Tally } from './state.ts';
import { ADDRESS_FIELDS, KEPT, recentFirst, recordName } from './records.ts';
import type { EventRecord, FeedbackStore, Recall, StoredEvent, StoredVerification, VerificationRecord } from './store.ts';

/** A script of the lua/ folder beside this module, read once at load (the build copies the folder beside the compiled files). */
const lua = (name: string): string => readFileSync(new URL(`./lua/${name}`, import.meta.url), 'utf8');

/** The standing arithmetic of state.ts (standingOf, applyEvent, moveTally), in Lua. */
const RECORD_SCRIPT = lua('feedback-record.lua');

const MARK_CATCH_ALL_SCRIPT = lua('feedback-mark-catch-all.lua');

type Pipeline = ReturnType<Redis['pipeline']>;
/** The commands defineCommand adds (the scripts' keys: address, events, domain, overall), answering `R`. */
interface Scripts<R> {
  feedbackRecord(a: string, e: string, d: string, k: string, outcome: string, at: string, source: string, ttl: number, max: number): R;
  feedbackMarkCatchAll(d: string, k: string, ttl: number): R;
}
type ScriptedPipeline = Pipeline & Scripts<Pipeline>;
type ScriptedRedis = Redis & Scripts<Promise<unknown>>;

const count = (value: string | null | undefined): number => {
  const parsed = Number(value ?? 0);
  return Number.isFinite(parsed) ? parsed : 0;
};

const isOutcome = (value: string | undefined): value is Outcome => OUTCOMES.some((outcome) => outcome === value);
const isSource = (value: string | undefined): value is FeedbackSource => SOURCES.some((source) => source === value);

export class RedisFeedbackStore implements FeedbackStore {
  private readonly redis: ScriptedRedis;
  private readonly ttlSeconds: number;

  constructor(
    redis: Redis,
    private readonly prefix: string,
    private readonly retentionMs: number,
  ) {
    if (!('feedbackRecord' in redis)) {
      redis.defineCommand('feedbackRecord', { numberOfKeys: 4, lua: RECORD_SCRIPT });
      redis.defineCommand('feedbackMarkCatchAll', { numberOfKeys: 2, lua: MARK_CATCH_ALL_SCRIPT });
    }
    // Defined just above: the cast names what defineCommand added (as the meter does).
    this.redis = redis as ScriptedRedis;
    this.ttlSeconds = Math.max(1, Math.ceil(retentionMs / 1_000));
  }

  /** A record's key (records.ts): every record of a scope in the scope's slot. */
  private key(scope: string, record: string): string {
    return `${this.prefix}:fb:{${scope}}:${record}`;
  }

  async record(scope: string, events: readonly EventRecord[]): Promise<void> {
    if (events.length === 0) return;
    // Defined with the scripts: the cast names what defineCommand added to pipelines too.
    const pipeline = this.redis.pipeline() as ScriptedPipeline;
    for (const event of events) {
      pipeline.feedbackRecord(
        this.key(scope, recordName('address', event.hash)),
        this.key(scope, recordName('events', event.hash)),
        this.key(scope, recordName('domain', event.domain)),
        this.key(scope, recordName('overall')),
        event.outcome,
        String(Math.round(event.at)),
        event.source,
        this.ttlSeconds,
        KEPT.events,
      );
    }
    await execAll(pipeline);
  }

  async recall(scope: string, hashes: readonly string[], domains: readonly string[]): Promise<Recall> {
    const pipeline = this.redis.pipeline();
    for (const hash of hashes) pipeline.hmget(this.key(scope, recordName('address', hash)), ...ADDRESS_FIELDS);
    for (const domain of domains) pipeline.hmget(this.key(scope, recordName('domain', domain)), 'd', 'b');
    pipeline.hmget(this.key(scope, recordName('overall')), 'd', 'b');
    const replies = await execAll(pipeline);
    const fields = (index: number): Array<string | null> => {
      const reply = replies[index];
      return Array.isArray(reply) ? reply.map((value) => (typeof value === 'string' ? value : null)) : [];
    };
    const addresses = new Map<string, AddressState>();
    hashes.forEach((hash, index) => {
      const [b, s, d, c, lb, ld, lc, le] = fields(index); // ADDRESS_FIELDS' order
      if (le === null || le === undefined) return;
      addresses.set(hash, {
        bounces: count(b),
        softBounces: count(s),
        deliveries: count(d),
        complaints: count(c),
        lastBounceAt: count(lb),
        lastDeliveredAt: count(ld),
        lastComplaintAt: count(lc),
        lastEventAt: count(le),
      });
    });
    const tally = (index: number): Tally => {
      const [d, b] = fields(index);
      return { delivered: Math.max(0, count(d)), bounced: Math.max(0, count(b)) };
    };
    const tallies = new Map<string, Tally>();
    domains.forEach((domain, index) => tallies.set(domain, tally(hashes.length + index)));
    return { addresses, domains: tallies, overall: tally(hashes.length + domains.length) };
  }

  async markCatchAll(scope: string, domains: readonly string[]): Promise<void> {
    if (domains.length === 0) return;
    const pipeline = this.redis.pipeline() as ScriptedPipeline;
    for (const domain of domains)
      pipeline.feedbackMarkCatchAll(this.key(scope, recordName('domain', domain)), this.key(scope, recordName('overall')), this.ttlSeconds);
    await execAll(pipeline);
  }

  async recordVerifications(scope: string, entries: readonly VerificationRecord[]): Promise<void> {
    if (entries.length === 0) return;
    const pipeline = this.redis.pipeline();
    for (const entry of entries) {
      const key = this.key(scope, recordName('verifications', entry.hash));
      pipeline.lpush(key, `${Math.round(entry.at)}|${entry.verdict}|${entry.reason}|${entry.score}`);
      pipeline.ltrim(key, 0, KEPT.verifications - 1);
      pipeline.expire(key, this.ttlSeconds);
    }
    await execAll(pipeline);
  }

  async history(scope: string, hash: string, now: number): Promise<{ verifications: StoredVerification[]; events: StoredEvent[] }> {
    const [verifications, events] = await Promise.all([
      this.redis.lrange(this.key(scope, recordName('verifications', hash)), 0, -1),
      this.redis.lrange(this.key(scope, recordName('events', hash)), 0, -1),
    ]);
    return {
      verifications: recentFirst(
        verifications.flatMap((line): StoredVerification[] => {
          const [at, verdict, reason, score] = line.split('|');
          return verdict !== undefined && reason !== undefined ? [{ at: Number(at), verdict, reason, score: Number(score) }] : [];
        }),
        now,
        this.retentionMs,
      ),
      events: recentFirst(
        events.flatMap((line): StoredEvent[] => {
          const [at, outcome, source] = line.split('|');
          return isOutcome(outcome) && isSource(source) ? [{ at: Number(at), outcome, source }] : [];
        }),
        now,
        this.retentionMs,
      ),
    };
  }

  async deleteScope(scope: string): Promise<void> {
    // On a cluster the scope's keys share one slot, so one node's SCAN finds them all.
    const pattern = `${this.prefix}:fb:{${scope}}:*`;
    const nodes = 'nodes' in this.redis && typeof this.redis.nodes === 'function' ? this.redis.nodes('master') : [this.redis];
    for (const node of nodes) {
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
        cursor = next;
        if (keys.length > 0) await this.redis.unlink(...keys);
      } while (cursor !== '0');
    }
  }
}

/** A pipeline's replies, or its first error thrown. */
async function execAll(pipeline: Pipeline): Promise<unknown[]> {
  const results = (await pipeline.exec()) ?? [];
  return results.map(([error, reply]) => {
    if (error !== null) throw error;
    return reply;
  });
}

/**
 * The deployment's HISTORY_HASH_SECRET when the operator set none: made once and kept in Redis
 * (SET NX), so that every gateway and worker hashes alike and a restart finds its history.
 */
export async function sharedHashSecret(redis: Redis, prefix: string, make: () => string): Promise<string> {
  const key = `${prefix}:fb:{secret}`;
  await redis.set(key, make(), 'NX');
  const secret = await redis.get(key);
  if (secret === null) throw new Error('the feedback hash secret could not be kept in Redis');
  return secret;
}

/** Distributed mode: the Redis store, and the secret kept in Redis when none is configured. */
export function redisFeedback(redis: Redis, prefix: string, env: FeedbackEnv): Feedback {
  return feedbackFromConfig(env, new RedisFeedbackStore(redis, prefix, settingsOf(env).retentionMs), () =>
    sharedHashSecret(redis, prefix, generateHashSecret),
  );
}
