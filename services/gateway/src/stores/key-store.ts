import type { OperationId } from '@svc/contracts';
import { digestsEqual, hashApiKey, keyIdOf } from '../auth/api-keys.ts';

export interface ApiKeyRecord {
  id: string;
  name: string;
  createdAt: string;
  revoked: boolean;
  /** Per-key free allowances that replace the configured defaults. */
  freeAllowance: Partial<Record<OperationId, number>>;
}

export interface KeyStore {
  /** The key's record when the presented token hashes to a stored key, else null. */
  authenticate(token: string): Promise<ApiKeyRecord | null>;
  create(name: string, key: string, freeAllowance?: Partial<Record<OperationId, number>>): Promise<ApiKeyRecord>;
  list(): Promise<ApiKeyRecord[]>;
  /** Revokes by id or by name; returns how many keys it revoked. */
  revoke(idOrName: string): Promise<number>;
  setAllowance(idOrName: string, operation: OperationId, calls: number | null): Promise<number>;
}

/** Embedded mode's store: keys from API_KEYS or the printed development key, in memory. */
export class MemoryKeyStore implements KeyStore {
  private readonly byHash = new Map<string, ApiKeyRecord>();

  authenticate(token: string): Promise<ApiKeyRecord | null> {
    const hash = hashApiKey(token);
    for (const [storedHash, record] of this.byHash) {
      if (digestsEqual(storedHash, hash)) return Promise.resolve(record);
    }
    return Promise.resolve(null);
  }

  create(name: string, key: string, freeAllowance: Partial<Record<OperationId, number>> = {}): Promise<ApiKeyRecord> {
    const hash = hashApiKey(key);
    const record: ApiKeyRecord = { id: keyIdOf(hash), name, createdAt: new Date().toISOString(), revoked: false, freeAllowance };
    this.byHash.set(hash, record);
    return Promise.resolve(record);
  }

  list(): Promise<ApiKeyRecord[]> {
    return Promise.resolve([...this.byHash.values()]);
  }

  revoke(idOrName: string): Promise<number> {
    return Promise.resolve(this.update(idOrName, (record) => (record.revoked = true)));
  }

  setAllowance(idOrName: string, operation: OperationId, calls: number | null): Promise<number> {
    return Promise.resolve(
      this.update(idOrName, (record) => {
        if (calls === null) delete record.freeAllowance[operation];
        else record.freeAllowance[operation] = calls;
      }),
    );
  }

  private update(idOrName: string, change: (record: ApiKeyRecord) => void): number {
    let count = 0;
    for (const record of this.byHash.values()) {
      if (record.id === idOrName || record.name === idOrName) {
        change(record);
        count += 1;
      }
    }
    return count;
  }
}
