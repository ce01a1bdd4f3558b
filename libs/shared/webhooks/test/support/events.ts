import { randomUUID } from 'node:crypto';
import type { CallbackEvent } from '@svc/webhooks';

/** A list.completed event as the lists code would build it. */
export function listCompleted(url: string, keyId = '0123456789abcdef'): CallbackEvent {
  const id = `evt_${randomUUID()}`;
  const list = { id: `lst_${randomUUID()}`, name: 'contacts.csv', status: 'completed', count: 3, distinct: 3, processed: 3 };
  return { id, type: 'list.completed', keyId, url, body: JSON.stringify({ ...list, event: 'list.completed' }) };
}
