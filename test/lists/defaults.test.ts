/**
 * The list contract's numbers when nothing is configured (docs/lists.md): other tests shorten
 * them for speed, so these pin the defaults themselves.
 */
import { listPageQuerySchema } from '@svc/contracts';
import { DEFAULT_ATTEMPT_TIMEOUT_MS } from '@svc/webhooks';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '@svc/config';

describe('list defaults', () => {
  const config = loadConfig({});

  it("retries greylisted addresses after 1, 5 and 4 minutes (postgrey's 5 resolve within 10) and keeps a list 7 days after it ends", () => {
    expect(config.LIST_RETRY_DELAYS_S).toEqual([60, 300, 240]);
    expect(config.LIST_RETENTION_DAYS).toBe(7);
  });

  it('LIST_RETRY_DELAYS_S set empty means no retries (other empty variables mean unset)', () => {
    const empty = loadConfig({ LIST_RETRY_DELAYS_S: '', LIST_RETENTION_DAYS: '' });
    expect(empty.LIST_RETRY_DELAYS_S).toEqual([]);
    expect(empty.LIST_RETENTION_DAYS).toBe(7);
  });

  it('allows 3 active lists and 10 list creations a minute per key', () => {
    expect(config.LIST_MAX_ACTIVE_PER_KEY).toBe(3);
    expect(config.rateLimits['email-verify.list']).toBe(10);
  });

  it('pages lists by 20 and gives a callback attempt 10 s', () => {
    expect(listPageQuerySchema.parse({}).limit).toBe(20);
    expect(DEFAULT_ATTEMPT_TIMEOUT_MS).toBe(10_000);
  });
});
