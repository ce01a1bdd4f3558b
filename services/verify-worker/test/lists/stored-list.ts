/**
 * A list of plain addresses stored ready for the list processor (memory store), and the jobs that
 * start its chunks: what a list upload leaves behind, without the gateway.
 */
import type { ListStore } from '@svc/lists';

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
