/**
 * The number of set bits of two 32-bit words together (a line's low and high word). The nibble
 * counts of both are added before the byte and word steps, which are then done once.
 */
export function popcount2(a: number, b: number): number {
  let x = a - ((a >>> 1) & 0x55555555);
  let y = b - ((b >>> 1) & 0x55555555);
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  y = (y & 0x33333333) + ((y >>> 2) & 0x33333333);
  // Nibbles of at most 8, then bytes of at most 16: no carry into a neighbour.
  x += y;
  x = (x & 0x0f0f0f0f) + ((x >>> 4) & 0x0f0f0f0f);
  return Math.imul(x, 0x01010101) >>> 24;
}
