/**
 * Keys in Redis: one hash per key at `<prefix>:apikey:{<sha256>}` and a set of all digests for
 * listing at `<prefix>:{apikeys}` (tagged like every name the product writes, in a slot of its own). A lookup is one HGETALL by digest; the digest is then compared in constant time.
 * On a Redis Cluster each key's hash is its own slot (tagged by its digest), so lookups spread
 * over the primaries; nothing writes a key's hash and the index in one transaction (they are
 * in different slots): the hash is written first, and listing skips an index entry without one.
 */
import { OPERATION_IDS, type OperationId } from '@svc/contracts';
import type { Redis } from '@svc/jobs/redis';
import { z } from 'zod';
import { digestsEqual, hashApiKey, keyIdOf } from '../auth/api-keys.ts';
import type { ApiKeyRecord, KeyStore } from './key-store.ts';

const allowanceSchema = z.partialRecord(z.enum(OPERATION_IDS), z.number().int().min(0));

export class RedisKeyStore implements KeyStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private keyOf(hash: string): string {
    return `${this.prefix}:apikey:{${hash}}`;
  }

  private get indexKey(): string {
    return `${this.prefix}:{apikeys}`;
  }

  async authenticate(token: string): Promise<ApiKeyRecord | null> {
    const hash = hashApiKey(token);
    const fields = await this.redis.hgetall(this.keyOf(hash));
    if (fields.hash === undefined || !digestsEqual(fields.hash, hash)) return null;
    return toRecord(fields);
  }

  async create(name: string, key: string, freeAllowance: Partial<Record<OperationId, number>> = {}): Promise<ApiKeyRecord> {
    const hash = hashApiKey(key);
    const record: ApiKeyRecord = { id: keyIdOf(hash), name, createdAt: new Date().toISOString(), revoked: false, freeAllowance };
    await this.redis.hset(this.keyOf(hash), {
      hash,
      id: record.id,
      name,
      createdAt: record.createdAt,
      revoked: '0',
      freeAllowance: JSON.stringify(freeAllowance),
    });
    await this.redis.sadd(this.indexKey, hash);
    return record;
  }

  async list(): Promise<ApiKeyRecord[]> {
    const hashes = await this.redis.smembers(this.indexKey);
    // One command per key, not a pipeline: on a cluster the keys are in as many slots.
    const rows = await Promise.all(hashes.map((hash) => this.redis.hgetall(this.keyOf(hash))));
    return rows
      .filter((fields) => fields.hash !== undefined)
      .map(toRecord)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  async revoke(idOrName: string): Promise<number> {
    return this.update(idOrName, () => ({ revoked: '1' }));
  }

  async setAllowance(idOrName: string, operation: OperationId, calls: number | null): Promise<number> {
    return this.update(idOrName, (record) => {
      const next = { ...record.freeAllowance };
      if (calls === null) delete next[operation];
      else next[operation] = calls;
      return { freeAllowance: JSON.stringify(next) };
    });
  }

  private async update(idOrName: string, change: (record: ApiKeyRecord) => Record<string, string>): Promise<number> {
    const hashes = await this.redis.smembers(this.indexKey);
    let count = 0;
    for (const hash of hashes) {
      const fields = await this.redis.hgetall(this.keyOf(hash));
      if (fields.hash === undefined) continue;
      const record = toRecord(fields);
      if (record.id !== idOrName && record.name !== idOrName) continue;
      await this.redis.hset(this.keyOf(hash), change(record));
      count += 1;
    }
    return count;
  }
}

function toRecord(fields: Record<string, string>): ApiKeyRecord {
  const allowance = allowanceSchema.safeParse(JSON.parse(fields.freeAllowance ?? '{}'));
  return {
    id: fields.id ?? '',
    name: fields.name ?? '',
    createdAt: fields.createdAt ?? '',
    revoked: fields.revoked === '1',
    freeAllowance: allowance.success ? allowance.data : {},
  };
}
