/**
 * Segments to the final codeword sequence: mode and count fields, data, terminator and padding,
 * split into blocks, error correction per block, then the blocks interleaved.
 */
import { BitBuffer } from './bit-buffer.ts';
import { blockStructure, dataCodewordCount, totalCodewordCount } from './level-m-tables.ts';
import { writeErrorCorrection } from './reed-solomon.ts';
import { ALPHANUMERIC, ALPHANUMERIC_VALUE, MODE_INDICATOR, NUMERIC, countBits, countWidthClass, type Segment } from './segmentation.ts';

function writeNumeric(buffer: BitBuffer, text: string, start: number, end: number): void {
  for (let i = start; i < end; i += 3) {
    const digits = Math.min(3, end - i);
    let value = 0;
    for (let k = 0; k < digits; k += 1) value = value * 10 + text.charCodeAt(i + k) - 48;
    buffer.put(value, digits * 3 + 1);
  }
}

function writeAlphanumeric(buffer: BitBuffer, text: string, start: number, end: number): void {
  let i = start;
  for (; i + 1 < end; i += 2) buffer.put(ALPHANUMERIC_VALUE[text.charCodeAt(i)]! * 45 + ALPHANUMERIC_VALUE[text.charCodeAt(i + 1)]!, 11);
  if (i < end) buffer.put(ALPHANUMERIC_VALUE[text.charCodeAt(i)]!, 6);
}

/** UTF-8, as TextEncoder writes it (a lone surrogate becomes U+FFFD). */
function writeUtf8(buffer: BitBuffer, text: string, start: number, end: number): void {
  for (let i = start; i < end; i += 1) {
    let point = text.charCodeAt(i);
    if (point < 0x80) {
      buffer.put(point, 8);
      continue;
    }
    if (point >= 0xd800 && point <= 0xdfff) {
      const low = text.charCodeAt(i + 1);
      if (point <= 0xdbff && i + 1 < end && low >= 0xdc00 && low <= 0xdfff) {
        point = 0x10000 + ((point - 0xd800) << 10) + (low - 0xdc00);
        i += 1;
      } else {
        point = 0xfffd;
      }
    }
    if (point < 0x800) {
      buffer.put(0xc0 | (point >>> 6), 8);
    } else if (point < 0x10000) {
      buffer.put(0xe0 | (point >>> 12), 8);
      buffer.put(0x80 | ((point >>> 6) & 0x3f), 8);
    } else {
      buffer.put(0xf0 | (point >>> 18), 8);
      buffer.put(0x80 | ((point >>> 12) & 0x3f), 8);
      buffer.put(0x80 | ((point >>> 6) & 0x3f), 8);
    }
    buffer.put(0x80 | (point & 0x3f), 8);
  }
}

/**
 * The data codewords: segments, then the terminator, bit padding and pad bytes (zero bits need no
 * write), in `out` (of dataCodewordCount(version) bytes; a fresh array unless one is given).
 */
export function dataCodewords(
  text: string,
  segments: readonly Segment[],
  version: number,
  out: Uint8Array = new Uint8Array(dataCodewordCount(version)),
): Uint8Array {
  const capacity = dataCodewordCount(version);
  const buffer = new BitBuffer(out);
  const widthClass = countWidthClass(version);
  for (const segment of segments) {
    buffer.put(MODE_INDICATOR[segment.mode], 4);
    buffer.put(segment.count, countBits(segment.mode, widthClass));
    if (segment.mode === NUMERIC) writeNumeric(buffer, text, segment.start, segment.end);
    else if (segment.mode === ALPHANUMERIC) writeAlphanumeric(buffer, text, segment.start, segment.end);
    else writeUtf8(buffer, text, segment.start, segment.end);
  }
  if (buffer.lengthInBits > capacity * 8) throw new RangeError(`${buffer.lengthInBits} bits do not fit version ${version}`);
  buffer.flush();
  // A terminator of up to four zero bits, zeros to the byte boundary, then 0xec 0x11 alternately.
  const padStart = Math.min(capacity, Math.ceil((buffer.lengthInBits + 4) / 8));
  for (let i = padStart; i < capacity; i += 1) buffer.bytes[i] = (i - padStart) % 2 === 0 ? 0xec : 0x11;
  return buffer.bytes;
}

/**
 * Data and error-correction codewords in the order they are placed in the symbol: codeword i of
 * every block in turn (group 2 blocks are one longer: their last codewords follow all the others),
 * then the same for error correction, which is written straight into its interleaved places. In
 * `out` (of totalCodewordCount(version) bytes; a fresh array unless one is given).
 */
export function interleavedCodewords(
  data: Uint8Array,
  version: number,
  out: Uint8Array = new Uint8Array(totalCodewordCount(version)),
): Uint8Array {
  const { eccPerBlock, dataPerBlock } = blockStructure(version);
  const blocks = dataPerBlock.length;
  const short = dataPerBlock[0]!;
  const result = out;
  let longBlocks = 0;
  for (let block = 0, start = 0; block < blocks; block += 1) {
    const length = dataPerBlock[block]!;
    for (let i = 0; i < short; i += 1) result[i * blocks + block] = data[start + i]!;
    if (length > short) result[short * blocks + longBlocks++] = data[start + short]!;
    writeErrorCorrection(data, start, start + length, eccPerBlock, result, data.length + block, blocks);
    start += length;
  }
  return result;
}
