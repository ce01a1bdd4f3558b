/**
 * Tool-call cancellations across gateway replicas (distributed mode). A client's
 * `notifications/cancelled` is a POST of its own and a load balancer may send it to another
 * replica than the call it names. Each replica counts the tool calls it holds per key and
 * JSON-RPC id in Redis (`<prefix>:mcp:call:{<slot>}`, hash-tagged as every name the product writes, expiring after the longest deadline, so a
 * crashed replica's counts lapse); a replica that does not hold the named call publishes the
 * cancellation on `<prefix>:mcp:cancelled` when the deployment holds exactly one such call, and the
 * replica holding it closes it. Two clients of one key with the same id in flight stay ambiguous
 * and are left alone, as on one replica.
 *
 * Slots are digests of key id and JSON-RPC id: an id is the client's and may be any length.
 */
import { hash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Redis } from '@svc/jobs/redis';

/** A script of the lua/ folder beside this module, read once at load (the build copies the folder beside the compiled files). */
const lua = (name: string): string => readFileSync(new URL(`./lua/${name}`, import.meta.url), 'utf8');

/** Longer than any tool call waits (the 32 s verify deadline), so a count outlives its call. */
const CALL_COUNT_TTL_MS = 60_000;

/** KEYS[1]: a slot's count. Returns 1 if it was counted down, 0 if it had lapsed. */
const END_CALL = lua('mcp-call-end.lua');

/** The connection with the end-of-call script defined on it (sent by its SHA, as ioredis does for defined commands). */
type RelayRedis = Redis & { mcpCallEnd(count: string): Promise<number> };

export interface CancellationRelay {
  /** A tool call of this slot started on this replica (until `ended`). */
  started(slot: string): void;
  ended(slot: string): void;
  /** Asks the replica holding the deployment's only call of this slot to close it. */
  forward(slot: string): Promise<void>;
  /** Calls `cancel` with each slot another replica forwarded. */
  listen(cancel: (slot: string) => void): Promise<void>;
  close(): Promise<void>;
}

export const callSlot = (keyId: string, rpcId: string | number): string => hash('sha256', `${keyId}\n${typeof rpcId}:${rpcId}`, 'hex');

export class RedisCancellationRelay implements CancellationRelay {
  private readonly channel: string;
  private readonly redis: RelayRedis;

  /** `redis` issues commands; `subscriber` is a connection of its own (subscriber mode takes it whole). */
  constructor(
    redis: Redis,
    private readonly subscriber: Redis,
    private readonly prefix: string,
  ) {
    if (!('mcpCallEnd' in redis)) redis.defineCommand('mcpCallEnd', { numberOfKeys: 1, lua: END_CALL });
    // Defined just above: the cast names what defineCommand added, as the meter's does.
    this.redis = redis as RelayRedis;
    this.channel = `${prefix}:mcp:cancelled`;
  }

  private countKey(slot: string): string {
    return `${this.prefix}:mcp:call:{${slot}}`;
  }

  started(slot: string): void {
    // Best effort: without Redis a cancellation reaches only this replica's calls.
    void this.redis
      .multi()
      .incr(this.countKey(slot))
      .pexpire(this.countKey(slot), CALL_COUNT_TTL_MS)
      .exec()
      .catch(() => undefined);
  }

  ended(slot: string): void {
    // Deleted at zero; and never a DECR of a count that lapsed meanwhile, which would leave a
    // count of -1 without expiry, one key per such call for ever.
    void this.redis.mcpCallEnd(this.countKey(slot)).catch(() => undefined);
  }

  async forward(slot: string): Promise<void> {
    const held = await this.redis.get(this.countKey(slot));
    if (held === '1') await this.redis.publish(this.channel, slot);
  }

  async listen(cancel: (slot: string) => void): Promise<void> {
    this.subscriber.on('message', (channel: string, slot: string) => {
      if (channel === this.channel) cancel(slot);
    });
    await this.subscriber.subscribe(this.channel);
  }

  async close(): Promise<void> {
    await this.subscriber.quit().catch(() => undefined);
  }
}
