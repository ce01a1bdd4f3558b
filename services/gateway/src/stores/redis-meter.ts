/**
 * The meter in Redis: one hash per key and month, updated by one script, so that two gateway
 * replicas can never both decide that the same call was the last free one.
 */
import { OPERATION_IDS, type OperationId } from '@svc/contracts';
import type { Redis } from '@svc/jobs/redis';
import type { Charge, Meter, OperationUsage } from './meter.ts';

/** Usage is kept for 400 days: long enough to answer billing questions about last year's months. */
const RETENTION_SECONDS = 400 * 86_400;

const RECORD_SCRIPT = `
local calls = redis.call('HINCRBY', KEYS[1], ARGV[1] .. ':calls', 1)
local billable = 0
if calls > tonumber(ARGV[2]) then
  billable = 1
  redis.call('HINCRBY', KEYS[1], ARGV[1] .. ':billable', 1)
end
redis.call('EXPIRE', KEYS[1], ARGV[3])
return {calls, billable}
`;

type MeterRedis = Redis & { meterRecord(key: string, operation: string, allowance: number, ttl: number): Promise<[number, number]> };

export class RedisMeter implements Meter {
  private readonly redis: MeterRedis;

  constructor(
    redis: Redis,
    private readonly prefix: string,
  ) {
    if (!('meterRecord' in redis)) redis.defineCommand('meterRecord', { numberOfKeys: 1, lua: RECORD_SCRIPT });
    this.redis = redis as MeterRedis;
  }

  private keyOf(keyId: string, period: string): string {
    return `${this.prefix}:usage:${period}:${keyId}`;
  }

  async record(keyId: string, operation: OperationId, period: string, allowance: number): Promise<Charge> {
    const [calls, billable] = await this.redis.meterRecord(this.keyOf(keyId, period), operation, allowance, RETENTION_SECONDS);
    return { calls, billable: billable === 1, freeRemaining: Math.max(0, allowance - calls) };
  }

  async usage(keyId: string, period: string): Promise<Partial<Record<OperationId, OperationUsage>>> {
    const fields = await this.redis.hgetall(this.keyOf(keyId, period));
    const out: Partial<Record<OperationId, OperationUsage>> = {};
    for (const operation of OPERATION_IDS) {
      const calls = Number(fields[`${operation}:calls`] ?? 0);
      if (calls > 0) out[operation] = { calls, billableCalls: Number(fields[`${operation}:billable`] ?? 0) };
    }
    return out;
  }
}
