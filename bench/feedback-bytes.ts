/**
 * What feedback costs in Redis per address: 1,000 addresses at 50 domains, each with one
 * reported hard bounce and one verification, then MEMORY USAGE of every key by kind.
 * `REDIS_URL=redis://... node --import tsx bench/feedback-bytes.ts` (docs/feedback.md quotes it).
 */
import { Redis } from 'ioredis';
import { redisFeedback } from '@svc/feedback/redis';

const url = process.env['REDIS_URL'];
if (url === undefined) throw new Error('set REDIS_URL');
const redis = new Redis(url);
const prefix = `bench-feedback-bytes-${Date.now()}`;
const feedback = redisFeedback(redis, prefix, {
  FEEDBACK_SCOPE: 'key',
  FEEDBACK_BOUNCE_TTL_DAYS: 180,
  FEEDBACK_DELIVERY_SETTLE_H: 72,
  HISTORY_RETENTION_DAYS: 365,
});
const N = 1_000;
const key = 'key_0123456789abcdef';
const address = (i: number) => `person${i}@company-${i % 50}.example`;
await feedback.report(
  key,
  Array.from({ length: N }, (_, i) => ({
    email: address(i),
    outcome: 'hard_bounce' as const,
    at: Date.now() - 1_000,
    source: 'sendgrid' as const,
  })),
);
await feedback.remember(
  key,
  Array.from({ length: N }, (_, i) => ({
    address: address(i),
    verdict: 'undeliverable',
    reason: 'known_bounce',
    score: 3,
    catchAll: null,
  })),
);
const keys = await redis.keys(`${prefix}:fb:*`);
const byKind = new Map<string, { count: number; bytes: number }>();
for (const name of keys) {
  const kind =
    /:(a|e|v|d|k):[^:]*$|:(k)$/
      .exec(name)
      ?.slice(1)
      .find((part) => part !== undefined) ?? 'secret';
  const bytes = Number(await redis.memory('USAGE', name));
  const entry = byKind.get(kind) ?? { count: 0, bytes: 0 };
  byKind.set(kind, { count: entry.count + 1, bytes: entry.bytes + bytes });
}
for (const [kind, { count, bytes }] of byKind) console.log(`${kind}: ${count} keys, ${Math.round(bytes / count)} bytes each`);
const perAddress = ['a', 'e', 'v'].reduce((sum, kind) => sum + (byKind.get(kind)?.bytes ?? 0), 0) / N;
console.log(`per address (state, 1 event, 1 verification): ${Math.round(perAddress)} bytes`);
if (keys.length > 0) await redis.del(...keys);
redis.disconnect();
