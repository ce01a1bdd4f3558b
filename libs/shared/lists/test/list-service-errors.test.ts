/**
 * A list request whose store does not answer is refused 503 naming that store (the list store
 * or the meter), as every other operation's are: the message tells an operator where to look.
 * Real clients against a Redis port nobody listens on (the request role fails at once).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { ApiError } from '@svc/contracts';
import { createRedis } from '@svc/jobs/redis';
import { MemoryMeter, RedisMeter } from '@svc/metering';
import { freePort } from '@svc/testkit';
import { MemoryListQueue, MemoryListStore } from '../src/index.ts';
import { RedisListStore } from '../src/redis-store.ts';
import { ListService, type ListsDeps } from '../src/list-service.ts';

const deadPort = await freePort();
const dead = createRedis({ kind: 'single', url: `redis://127.0.0.1:${deadPort}`, commandTimeoutMs: 200 }, 'request', 'dead');
afterAll(() => dead.disconnect());

const owner = { id: 'key_errors', freeAllowance: {} };
const silent = { warn: () => undefined };
const service = (parts: Pick<ListsDeps, 'store' | 'meter'>): ListService =>
  new ListService({
    ...parts,
    queue: new MemoryListQueue({ concurrency: 1 }),
    maxActivePerKey: 5,
    maxStoredRowsPerKey: 1_000_000,
    freeAllowances: { 'email-verify.batch': 0, 'email-verify.single': 0, 'qr.generate': 0, 'qr.wifi': 0, 'email-verify.list': 0 },
    allowPrivateCallbacks: false,
  });

async function refusal(call: Promise<unknown>): Promise<ApiError> {
  const error = await call.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof ApiError)) throw new Error(`expected an ApiError, got ${String(error)}`);
  return error;
}

describe('a list request whose store is gone', () => {
  it('names the list store', async () => {
    const lists = service({ store: new RedisListStore(dead, 'errors'), meter: new MemoryMeter() });
    for (const call of [lists.page(owner.id, 10, undefined), lists.cancel(owner.id, 'lst_000000000000000000000000')]) {
      const error = await refusal(call);
      expect(error.code).toBe('service_unavailable');
      expect(error.message).toBe('The list store cannot be reached right now; try again shortly.');
    }
  });

  it('names the meter', async () => {
    const lists = service({ store: new MemoryListStore(), meter: new RedisMeter(dead, 'errors') });
    const error = await refusal(
      lists.create(
        owner,
        { layout: { addressColumn: 0, columns: ['email'], delimiter: ',', bom: false }, rows: [['ann@example.com']] },
        silent,
      ),
    );
    expect(error.code).toBe('service_unavailable');
    expect(error.message).toBe('The meter cannot be reached right now; try again shortly.');
  });
});
