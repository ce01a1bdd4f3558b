/**
 * `npm run bench:meter`: what one metered call costs Redis. The meter's script runs once per
 * answered call (plugins/metering.ts), so its time on the Redis thread and the memory it keeps
 * are part of every call's price (issue 20 measures the QR route's CPU).
 *
 * A primary and its replica of our own (libs/testkit, so no other user's commands are counted
 * and replication is paid as in production), one `request` connection as the gateway opens it,
 * BENCH_METER_CALLS records (default 50,000) spread over 100 keys, BENCH_METER_CONCURRENCY in
 * flight (default 50). Reported: records per second, the primary's `INFO commandstats`
 * usec_per_call of evalsha (time inside Redis per script run), its CPU seconds per 10,000
 * records (INFO cpu, main thread and replication included), and the memory the run left
 * (`used_memory` after minus before, per record).
 */
import { randomUUID } from 'node:crypto';
import { createRedis, waitForRedis } from '@svc/jobs/redis';
import { RedisMeter } from '@svc/metering';
import { redisCommand, startRedisReplicaPair } from '@svc/testkit';

const CALLS = Number(process.env.BENCH_METER_CALLS ?? 50_000);
const CONCURRENCY = Number(process.env.BENCH_METER_CONCURRENCY ?? 50);
const KEYS = 100;

/** `field:value` lines of an INFO section. */
async function info(port: number, section: string): Promise<Map<string, string>> {
  const text = String(await redisCommand(port, ['INFO', section]));
  return new Map(
    text
      .split('\r\n')
      .filter((line) => line.includes(':'))
      .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1)]),
  );
}

async function evalshaStats(port: number): Promise<{ calls: number; usec: number }> {
  const line = (await info(port, 'commandstats')).get('cmdstat_evalsha') ?? '';
  const field = (name: string) => Number(new RegExp(`${name}=([0-9.]+)`).exec(line)?.[1] ?? 0);
  return { calls: field('calls'), usec: field('usec') };
}

async function cpuSeconds(port: number): Promise<number> {
  const cpu = await info(port, 'cpu');
  return Number(cpu.get('used_cpu_sys')) + Number(cpu.get('used_cpu_user'));
}

const usedMemory = async (port: number): Promise<number> => Number((await info(port, 'memory')).get('used_memory'));

async function main(): Promise<void> {
  const pair = await startRedisReplicaPair();
  const redis = createRedis(`redis://127.0.0.1:${pair.primary.port}`, 'request', 'bench-meter');
  try {
    await waitForRedis(redis, 5_000);
    const meter = new RedisMeter(redis, 'bench', 500);
    const period = '2026-11';
    // One call loads the script: its EVAL is not counted below.
    await meter.record({ keyId: 'warm', operation: 'qr.generate', period, allowance: 1_000, chargeId: randomUUID() });
    const [statsBefore, cpuBefore, memoryBefore] = [
      await evalshaStats(pair.primary.port),
      await cpuSeconds(pair.primary.port),
      await usedMemory(pair.primary.port),
    ];
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < CALLS) {
          const call = next++;
          await meter.record({ keyId: `key-${call % KEYS}`, operation: 'qr.generate', period, allowance: 1_000, chargeId: randomUUID() });
        }
      }),
    );
    const seconds = (performance.now() - started) / 1_000;
    const [statsAfter, cpuAfter, memoryAfter] = [
      await evalshaStats(pair.primary.port),
      await cpuSeconds(pair.primary.port),
      await usedMemory(pair.primary.port),
    ];
    const runs = statsAfter.calls - statsBefore.calls;
    console.log(
      JSON.stringify({
        records: CALLS,
        concurrency: CONCURRENCY,
        recordsPerSecond: Math.round(CALLS / seconds),
        evalshaRuns: runs,
        usecPerCall: Number(((statsAfter.usec - statsBefore.usec) / runs).toFixed(2)),
        redisCpuSecondsPer10k: Number((((cpuAfter - cpuBefore) * 10_000) / CALLS).toFixed(3)),
        bytesKeptPerRecord: Math.round((memoryAfter - memoryBefore) / CALLS),
      }),
    );
  } finally {
    redis.disconnect();
    await pair.close();
  }
}

await main();
