/**
 * A list of plain addresses stored ready for the list processor (memory store), and the jobs that
 * start its chunks: what a list upload leaves behind, without the gateway.
 */
import type { ListRecord, ListStore, MemoryListQueue } from '@svc/lists';
import { waitUntil } from '@svc/testkit';

export type ListItem = [index: number, address: string, entries: number];

export interface StoredList {
  items: ListItem[];
  /** The chunk jobs to hand the list queue. */
  jobs: Array<{ job: { kind: 'chunk'; listId: string; chunk: number } }>;
}

export async function storeAddressList(store: ListStore, id: string, addresses: string[], chunkSize: number): Promise<StoredList> {
  const items = addresses.map((address, i): ListItem => [i, address, 1]);
  const work = Array.from({ length: Math.ceil(items.length / chunkSize) }, (_, c) => items.slice(c * chunkSize, (c + 1) * chunkSize));
  await store.create(
    {
      id,
      keyId: 'key',
      name: null,
      count: items.length,
      distinct: items.length,
      inputChunks: 1,
      workChunks: work.length,
      createdAt: Date.now(),
      callbackUrl: null,
      allowance: 0,
      layout: { columns: ['email'], addressColumn: 0, delimiter: ',', bom: false },
    },
    work,
  );
  return { items, jobs: work.map((_, chunk) => ({ job: { kind: 'chunk', listId: id, chunk } })) };
}

/**
 * Runs the list's chunk jobs on `queue` with `handle` until the list completes (or `timeoutMs`),
 * then closes the queue. Every status the list was seen in is returned, with the time it took;
 * `seen` gets each record read on the way.
 */
export async function runUntilCompleted(
  list: { store: ListStore; id: string; jobs: StoredList['jobs'] },
  queue: MemoryListQueue,
  handle: Parameters<MemoryListQueue['start']>[0],
  timeoutMs: number,
  seen?: (record: ListRecord | undefined) => void,
): Promise<{ statuses: Set<string>; tookMs: number }> {
  const statuses = new Set<string>();
  queue.start(handle);
  const started = Date.now();
  try {
    await queue.add(list.jobs);
    await waitUntil(
      async () => {
        const record = await list.store.get(list.id);
        statuses.add(record?.status ?? 'gone');
        seen?.(record);
        return record?.status === 'completed';
      },
      timeoutMs,
      'the list to complete',
    );
  } finally {
    await queue.close();
  }
  return { statuses, tookMs: Date.now() - started };
}
