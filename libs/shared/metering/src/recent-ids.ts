/**
 * The newest ids and what each stands for, at most `capacity` of them and none older than
 * `ttlMs`: the memory meter's charge ids.
 *
 * Why not a Map alone, pruned from its oldest end: a Map iterates over the places of the entries
 * deleted from its front until it is rebuilt, so at 10,000 ids each pruning walked thousands of
 * them: about 6.5 us per call in a loop that sets at one end of a 10,000-entry Map and deletes at
 * the other, and a tenth of the embedded gateway's CPU under `npm run bench:qr`.
 * Here the ages sit in a ring, oldest first, and the Map only looks ids up.
 */
interface Entry<V> {
  /** Its place in the order of sets: an id set again (a voided charge) leaves its older place dead. */
  seq: number;
  value: V;
}

export class RecentIds<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly ids: string[];
  private readonly ats: number[];
  /** Sets so far; the ring holds sets `oldest .. next - 1`. */
  private next = 0;
  private oldest = 0;

  constructor(
    private readonly capacity: number,
    private readonly ttlMs: number,
  ) {
    this.ids = new Array<string>(capacity);
    this.ats = new Array<number>(capacity).fill(0);
  }

  get(id: string, now: number): V | undefined {
    this.forget(now);
    return this.entries.get(id)?.value;
  }

  /** Sets `id` as the newest, whether or not it was known. */
  set(id: string, value: V, now: number): void {
    this.forget(now);
    if (this.next - this.oldest === this.capacity) this.drop();
    const slot = this.next % this.capacity;
    this.ids[slot] = id;
    this.ats[slot] = now;
    this.entries.set(id, { seq: this.next, value });
    this.next += 1;
  }

  private forget(now: number): void {
    while (this.oldest < this.next && now - (this.ats[this.oldest % this.capacity] ?? 0) >= this.ttlMs) this.drop();
  }

  /** Drops the oldest place, and its id unless that id was set again since. */
  private drop(): void {
    const id = this.ids[this.oldest % this.capacity];
    if (id !== undefined && this.entries.get(id)?.seq === this.oldest) this.entries.delete(id);
    this.oldest += 1;
  }
}
