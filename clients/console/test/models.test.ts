/**
 * The console's reader of the list object keeps every field of the contract's schema
 * (@svc/contracts' listObjectSchema, which the gateway answers with): a list object with every
 * field set, as the API sends it, reads back equal; a header-less upload's column (header null)
 * is kept; what the contract refuses, the reader refuses.
 */
import { listObjectSchema } from '@svc/contracts';
import { describe, expect, it } from 'vitest';
import { ENDED, readList } from '../src/models.ts';

const FULL = listObjectSchema.parse({
  id: 'lst_0123456789abcdef01234567',
  name: 'Q4 leads',
  status: 'retrying',
  count: 12,
  distinct: 11,
  processed: 8,
  summary: { deliverable: 6, risky: 1, undeliverable: 1 },
  costUsd: '0.00',
  createdAt: '2026-11-29T00:00:00.000Z',
  startedAt: '2026-11-29T00:00:01.000Z',
  completedAt: null,
  column: { index: 2, header: 'Work Email' },
  waiting: 4,
  waitingReasons: { greylisted: 4 },
  nextRetryAt: '2026-11-29T00:10:00.000Z',
  estimatedCompletionAt: '2026-11-29T00:20:00.000Z',
  encoding: 'utf-8',
});

describe('the console’s list object', () => {
  it('reads every field of the contract’s list object', () => {
    expect(readList(JSON.parse(JSON.stringify(FULL)))).toEqual(FULL);
    const failed = listObjectSchema.parse({ ...FULL, status: 'failed', error: 'The file could not be read.', completedAt: FULL.createdAt });
    expect(readList(failed)).toEqual(failed);
  });

  it('keeps the column of a file without a header row', () => {
    const headerless = listObjectSchema.parse({ ...FULL, column: { index: 1, header: null } });
    expect(readList(headerless).column).toEqual({ index: 1, header: null });
  });

  it('refuses a status the contract does not know, and knows which statuses end a list', () => {
    expect(() => readList({ ...FULL, status: 'paused' })).toThrow('status');
    expect([...ENDED].sort()).toEqual(['cancelled', 'completed', 'failed']);
  });
});
