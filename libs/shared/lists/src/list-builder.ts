/**
 * Turns an upload's rows into a stored list as they arrive: input rows are written in chunks
 * (the whole upload never sits in memory as rows), duplicates are counted, rows without an
 * address are kept for the CSV results but are no entries (not counted, probed nor billed), and at the end the
 * distinct addresses are sorted by domain into work chunks, so that one chunk's addresses share
 * SMTP sessions.
 */
import { ApiError, MAX_LIST_ADDRESSES, dedupKey } from '@svc/contracts';
import { INPUT_CHUNK_ROWS, NO_ADDRESS, WORK_CHUNK_SIZE, type InputRow, type WorkItem } from './model.ts';
import type { ListStore } from './store.ts';

export const tooManyAddresses = (): ApiError =>
  new ApiError('too_many_emails', `A list may contain at most ${MAX_LIST_ADDRESSES} addresses.`, {
    details: { max: MAX_LIST_ADDRESSES },
  });

const domainOf = (key: string): string => key.slice(key.lastIndexOf('@') + 1);

export class ListBuilder {
  private readonly indexByKey = new Map<string, number>();
  private readonly keys: string[] = [];
  /** The address of each distinct entry as first submitted (what gets probed). */
  private readonly addresses: string[] = [];
  private readonly entries: number[] = [];
  private pending: InputRow[] = [];
  private chunks = 0;
  count = 0;
  /** Rows whose address cell is empty or missing. */
  skipped = 0;
  /** Cells in the widest row. */
  width = 0;

  constructor(
    private readonly store: ListStore,
    private readonly listId: string,
    private readonly addressColumn: number,
  ) {}

  async add(cells: string[]): Promise<void> {
    const address = cells[this.addressColumn] ?? '';
    this.width = Math.max(this.width, cells.length);
    if (address.trim() === '') {
      this.skipped += 1;
      await this.push([NO_ADDRESS, ...cells]);
      return;
    }
    if (this.count >= MAX_LIST_ADDRESSES) throw tooManyAddresses();
    const key = dedupKey(address);
    let index = this.indexByKey.get(key);
    if (index === undefined) {
      index = this.keys.length;
      this.indexByKey.set(key, index);
      this.keys.push(key);
      this.addresses.push(address);
      this.entries.push(0);
    }
    this.entries[index]! += 1;
    this.count += 1;
    await this.push([index, ...cells]);
  }

  private async push(row: InputRow): Promise<void> {
    this.pending.push(row);
    if (this.pending.length >= INPUT_CHUNK_ROWS) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.pending.length === 0) return;
    const rows = this.pending;
    this.pending = [];
    await this.store.putInput(this.listId, this.chunks, rows);
    this.chunks += 1;
  }

  get inputChunks(): number {
    return this.chunks;
  }

  get distinct(): number {
    return this.keys.length;
  }

  /** Distinct addresses grouped by domain, in chunks of one batch's size. */
  work(): WorkItem[][] {
    const domains = this.keys.map(domainOf);
    const order = this.keys.map((_, index) => index);
    // Code-unit order: any stable grouping by domain serves, and localeCompare took most of a
    // second for 100,000 addresses, the gateway unable to answer anything meanwhile.
    order.sort((a, b) => (domains[a]! < domains[b]! ? -1 : domains[a]! > domains[b]! ? 1 : a - b));
    const chunks: WorkItem[][] = [];
    for (let start = 0; start < order.length; start += WORK_CHUNK_SIZE) {
      chunks.push(
        order.slice(start, start + WORK_CHUNK_SIZE).map((index): WorkItem => [index, this.addresses[index]!, this.entries[index]!]),
      );
    }
    return chunks;
  }
}
