/**
 * Phase 1, parse: every entry once by its dedup key; bad syntax is settled here, as is an entry
 * whose parsing throws (`unexpected_error`), never the whole batch.
 */
import { dedupKey } from '@svc/contracts';
import { parseAddress } from '../../checks/index.ts';
import type { BatchState } from '../batch-state.ts';
import { invalidSyntaxOutcome, unexpectedErrorOutcome } from '../results.ts';

export function parsePhase(emails: string[], batch: BatchState): void {
  const { settled, toProbe } = batch;
  for (const email of emails) {
    const key = dedupKey(email);
    if (settled.has(key) || toProbe.has(key)) continue;
    try {
      const parsed = parseAddress(email);
      if (parsed.ok) toProbe.set(key, parsed);
      else settled.set(key, invalidSyntaxOutcome(email));
    } catch {
      settled.set(key, unexpectedErrorOutcome(email, false));
    }
  }
  batch.total = settled.size + toProbe.size;
  batch.call.onSettled?.(settled.size, batch.total);
}
