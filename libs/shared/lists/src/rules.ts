/** The list lifecycle's rules, shared by both stores (the Redis store's script mirrors `nextStatus`). */
import { LIST_ID_PATTERN, type ListStatus } from '@svc/contracts';
import type { ListRecord } from './model.ts';

/**
 * After a commit: `completed` once every distinct address settled; `retrying` once every work
 * chunk had its first pass and only retries remain; otherwise as it was (`running`).
 */
export function nextStatus(record: Pick<ListRecord, 'status' | 'settled' | 'distinct' | 'workChunks'>, chunksDone: number): ListStatus {
  if (record.settled >= record.distinct) return 'completed';
  if (record.status === 'running' && chunksDone >= record.workChunks) return 'retrying';
  return record.status;
}

/** Page cursors: the last list's creation time and id, opaque to clients. */
export const encodeCursor = (at: number, id: string): string => Buffer.from(`${at}.${id}`, 'utf8').toString('base64url');

const CURSOR = new RegExp(`^(\\d{1,15})\\.(${LIST_ID_PATTERN})$`);

export function decodeCursor(cursor: string): { at: number; id: string } | undefined {
  const match = CURSOR.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  return match === null ? undefined : { at: Number(match[1]), id: match[2]! };
}
