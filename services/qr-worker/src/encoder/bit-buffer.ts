/** A fixed-capacity, most-significant-bit-first bit writer over the data codewords. */
export class BitBuffer {
  readonly bytes: Uint8Array;
  private bitLength = 0;

  constructor(byteCapacity: number) {
    this.bytes = new Uint8Array(byteCapacity);
  }

  get lengthInBits(): number {
    return this.bitLength;
  }

  /** Appends the `length` low bits of `value`, most significant first. Zero bits need no write. */
  put(value: number, length: number): void {
    for (let bit = length - 1; bit >= 0; bit -= 1) {
      if (((value >>> bit) & 1) === 1) this.bytes[this.bitLength >>> 3]! |= 0x80 >>> (this.bitLength & 7);
      this.bitLength += 1;
    }
  }
}
