/**
 * A fixed-capacity, most-significant-bit-first bit writer over the data codewords. Bits gather in
 * a word and go out a byte at a time, rather than one read-modify-write of a byte per bit.
 */
export class BitBuffer {
  readonly bytes: Uint8Array;
  /** Bytes written out so far. */
  private written = 0;
  /** The `pendingBits` (0..7) bits not yet written out, in the low bits. */
  private pending = 0;
  private pendingBits = 0;

  /** Writes into `bytes`, which it clears first. */
  constructor(bytes: Uint8Array) {
    this.bytes = bytes.fill(0);
  }

  get lengthInBits(): number {
    return 8 * this.written + this.pendingBits;
  }

  /** Appends the `length` (at most 24) low bits of `value`, most significant first; past the capacity, bits are dropped. */
  put(value: number, length: number): void {
    let bits = this.pendingBits + length;
    const pending = (this.pending << length) | (value & ((1 << length) - 1));
    while (bits >= 8) {
      bits -= 8;
      this.bytes[this.written++] = pending >>> bits;
    }
    this.pending = pending & ((1 << bits) - 1);
    this.pendingBits = bits;
  }

  /** Writes out the last partial byte, zero-padded. */
  flush(): void {
    if (this.pendingBits > 0) this.bytes[this.written] = this.pending << (8 - this.pendingBits);
  }
}
