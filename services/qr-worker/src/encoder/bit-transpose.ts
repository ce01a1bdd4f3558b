/**
 * Rows to columns of a packed symbol (two 32-bit words per line, bit x of a row is module x): the
 * placement writes each codeword bit once, into the rows, and the columns come from a bit-matrix
 * transpose (four 32 x 32 blocks at most) instead of a second write per bit.
 */
const block = new Int32Array(32);

/** Transposes the 32 x 32 bit block in `block` in place: bit x of word y goes to bit y of word x. */
function transposeBlock(): void {
  // Swap ever smaller off-diagonal sub-blocks: 16 x 16, then 8 x 8, ... 1 x 1 (Hacker's Delight, 7-3).
  for (let width = 16, low = 0x0000ffff; width !== 0; width >>= 1, low ^= low << width) {
    for (let k = 0; k < 32; k = (k + width + 1) & ~width) {
      const swapped = ((block[k]! >>> width) ^ block[k + width]!) & low;
      block[k]! ^= swapped << width;
      block[k + width]! ^= swapped;
    }
  }
}

/** The columns of the `size` x `size` symbol whose rows are `rows`, in the same packing, in `columns` (fresh unless given). */
export function transposeLines(rows: Int32Array, size: number, columns: Int32Array = new Int32Array(2 * size)): Int32Array {
  const halves = size > 32 ? 2 : 1;
  if (halves === 1) for (let column = 0; column < size; column += 1) columns[2 * column + 1] = 0;
  for (let rowHalf = 0; rowHalf < halves; rowHalf += 1) {
    for (let columnHalf = 0; columnHalf < halves; columnHalf += 1) {
      for (let y = 0; y < 32; y += 1) {
        const row = 32 * rowHalf + y;
        block[y] = row < size ? rows[2 * row + columnHalf]! : 0;
      }
      transposeBlock();
      for (let x = 0; x < 32; x += 1) {
        const column = 32 * columnHalf + x;
        if (column < size) columns[2 * column + rowHalf] = block[x]!;
      }
    }
  }
  return columns;
}
