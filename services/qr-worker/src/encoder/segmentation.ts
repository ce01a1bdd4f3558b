/**
 * Optimal mixed segmentation: the cheapest split of a text into numeric, alphanumeric and byte
 * (UTF-8) segments for one width of the character-count fields, by dynamic programming over code
 * points. Costs are counted in sixths of a bit, so a digit (10 bits per 3) and an alphanumeric
 * character (11 bits per 2) cost whole units and a segment's real length is its cost rounded up.
 * Kanji mode is not used: it needs Shift JIS, and readers decode byte segments as UTF-8.
 */
export const NUMERIC = 0;
export const ALPHANUMERIC = 1;
export const BYTE = 2;
export type Mode = typeof NUMERIC | typeof ALPHANUMERIC | typeof BYTE;

export const MODE_INDICATOR: Readonly<Record<Mode, number>> = { [NUMERIC]: 0b0001, [ALPHANUMERIC]: 0b0010, [BYTE]: 0b0100 };

/** Character-count field widths: versions 1..9 use class 0, versions 10..26 class 1. */
export type CountWidthClass = 0 | 1;
const COUNT_BITS: Readonly<Record<Mode, readonly [number, number]>> = { [NUMERIC]: [10, 12], [ALPHANUMERIC]: [9, 11], [BYTE]: [8, 16] };

export const countWidthClass = (version: number): CountWidthClass => (version < 10 ? 0 : 1);
export const countBits = (mode: Mode, widthClass: CountWidthClass): number => COUNT_BITS[mode][widthClass];

export interface Segment {
  mode: Mode;
  /** UTF-16 offsets of the segment's text. */
  start: number;
  end: number;
  /** What the character-count field holds: characters, or bytes in byte mode. */
  count: number;
}

const ALPHANUMERIC_CHARSET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:';
/** Alphanumeric value by char code, -1 when the character is not in the set. */
export const ALPHANUMERIC_VALUE: Int8Array = (() => {
  const values = new Int8Array(128).fill(-1);
  for (let i = 0; i < ALPHANUMERIC_CHARSET.length; i += 1) values[ALPHANUMERIC_CHARSET.charCodeAt(i)] = i;
  return values;
})();

/**
 * UTF-8 bytes of the code point whose first UTF-16 unit is `unit` and next unit `next` (NaN past
 * the end): 4 for a surrogate pair, 3 for a lone surrogate (written as U+FFFD).
 */
function utf8Length(unit: number, next: number): 1 | 2 | 3 | 4 {
  if (unit < 0x80) return 1;
  if (unit < 0x800) return 2;
  return unit <= 0xdbff && unit >= 0xd800 && next >= 0xdc00 && next <= 0xdfff ? 4 : 3;
}

/** Exact bit length of a segment's data, without its mode and count fields. */
export function segmentDataBits(mode: Mode, count: number): number {
  if (mode === NUMERIC) return 10 * Math.floor(count / 3) + [0, 4, 7][count % 3]!;
  if (mode === ALPHANUMERIC) return 11 * Math.floor(count / 2) + 6 * (count % 2);
  return 8 * count;
}

export function totalBits(segments: readonly Segment[], widthClass: CountWidthClass): number {
  let bits = 0;
  for (const segment of segments) bits += 4 + countBits(segment.mode, widthClass) + segmentDataBits(segment.mode, segment.count);
  return bits;
}

/** Larger than any real cost (800 four-byte code points cost 153,600 sixths), and a small integer. */
const UNREACHABLE = 1_000_000_000;
const MODES: readonly Mode[] = [NUMERIC, ALPHANUMERIC, BYTE];

/**
 * Per-call scratch, kept between calls and grown to the longest text seen (at most 1,600 UTF-16
 * units): the search is synchronous, and fresh arrays per call were a measurable share of it.
 * modeOf[3 * k + open]: the mode of code point k on the cheapest path that leaves `open` open after
 * it; start[k] and bytes[k]: code point k's UTF-16 offset and UTF-8 length.
 */
let modeOf = new Uint8Array(3 * 256);
let start = new Int32Array(257);
let bytes = new Uint8Array(256);

function reserve(units: number): void {
  if (bytes.length >= units) return;
  modeOf = new Uint8Array(3 * units);
  start = new Int32Array(units + 1);
  bytes = new Uint8Array(units);
}

/** The cost in sixths of a bit rounded up to a whole bit, or UNREACHABLE. */
const wholeBits = (cost: number) => (cost >= UNREACHABLE ? UNREACHABLE : Math.ceil(cost / 6) * 6);

/** The cheapest segmentation of `text` for one width of the count fields. */
export function segment(text: string, widthClass: CountWidthClass): Segment[] {
  const single = singleModeSegment(text);
  return single === undefined ? optimalSegments(text, widthClass) : [single];
}

/**
 * The one segment of a text of digits only, or of characters none of which the alphanumeric set
 * has (so bytes only), found by a scan instead of the search; undefined for any other text. Each
 * is the only cheapest segmentation, so the search would give it too: with no alphanumeric
 * character, bytes are the only mode and another byte segment only adds a header; with digits
 * only, numeric data (ceil(10n / 3) bits) is the least of the three modes' for any n digits and
 * every other split adds a header of 12 or more bits.
 */
export function singleModeSegment(text: string): Segment | undefined {
  let digits = 0;
  let utf8 = 0;
  for (let index = 0; index < text.length;) {
    const unit = text.charCodeAt(index);
    const value = unit < 128 ? ALPHANUMERIC_VALUE[unit]! : -1;
    if (value >= 10) return undefined;
    if (value >= 0) digits += 1;
    const length = utf8Length(unit, text.charCodeAt(index + 1));
    utf8 += length;
    index += length === 4 ? 2 : 1;
    if (digits > 0 && digits !== utf8) return undefined;
  }
  if (text.length === 0) return undefined;
  return digits > 0
    ? { mode: NUMERIC, start: 0, end: text.length, count: digits }
    : { mode: BYTE, start: 0, end: text.length, count: utf8 };
}

/** The search over every mode per code point (dynamic programming, see the top of this file). */
export function optimalSegments(text: string, widthClass: CountWidthClass): Segment[] {
  reserve(text.length);
  const numericHeader = 6 * (4 + countBits(NUMERIC, widthClass));
  const alphanumericHeader = 6 * (4 + countBits(ALPHANUMERIC, widthClass));
  const byteHeader = 6 * (4 + countBits(BYTE, widthClass));
  // The cheapest encoding of the code points so far that leaves a segment of that mode open.
  let numeric = numericHeader;
  let alphanumeric = alphanumericHeader;
  let byte = byteHeader;
  let points = 0;
  for (let index = 0; index < text.length; points += 1) {
    const unit = text.charCodeAt(index);
    const length = utf8Length(unit, text.charCodeAt(index + 1));
    start[points] = index;
    bytes[points] = length;
    index += length === 4 ? 2 : 1;
    const value = unit < 128 ? ALPHANUMERIC_VALUE[unit]! : -1;
    // Continue each open segment with this code point.
    numeric = value >= 0 && value < 10 ? numeric + 20 : UNREACHABLE;
    alphanumeric = value >= 0 ? alphanumeric + 33 : UNREACHABLE;
    byte += 48 * length;
    const at = 3 * points;
    if (index >= text.length) {
      modeOf[at + NUMERIC] = NUMERIC;
      modeOf[at + ALPHANUMERIC] = ALPHANUMERIC;
      modeOf[at + BYTE] = BYTE;
      points += 1;
      break;
    }
    // Or end the cheapest other segment here and open this mode for the next code point; on a tie
    // the segment stays open, then the first of the other two modes (numeric, alphanumeric, byte) wins.
    const numericEnd = wholeBits(numeric);
    const alphanumericEnd = wholeBits(alphanumeric);
    const byteEnd = wholeBits(byte);
    let from: Mode = NUMERIC;
    if (alphanumericEnd + numericHeader < numeric) {
      numeric = alphanumericEnd + numericHeader;
      from = ALPHANUMERIC;
    }
    if (byteEnd + numericHeader < numeric) {
      numeric = byteEnd + numericHeader;
      from = BYTE;
    }
    modeOf[at + NUMERIC] = from;
    from = ALPHANUMERIC;
    if (numericEnd + alphanumericHeader < alphanumeric) {
      alphanumeric = numericEnd + alphanumericHeader;
      from = NUMERIC;
    }
    if (byteEnd + alphanumericHeader < alphanumeric) {
      alphanumeric = byteEnd + alphanumericHeader;
      from = BYTE;
    }
    modeOf[at + ALPHANUMERIC] = from;
    from = BYTE;
    if (numericEnd + byteHeader < byte) {
      byte = numericEnd + byteHeader;
      from = NUMERIC;
    }
    if (alphanumericEnd + byteHeader < byte) {
      byte = alphanumericEnd + byteHeader;
      from = ALPHANUMERIC;
    }
    modeOf[at + BYTE] = from;
  }
  start[points] = text.length;
  // The cheapest final mode, the first on a tie.
  let last: Mode = NUMERIC;
  if (Math.ceil(alphanumeric / 6) < Math.ceil(numeric / 6)) last = ALPHANUMERIC;
  if (Math.ceil(byte / 6) < Math.ceil((last === NUMERIC ? numeric : alphanumeric) / 6)) last = BYTE;
  return segmentsFromPath(points, last);
}

/** Walks the path back from the last code point, then joins code points of one mode into segments. */
function segmentsFromPath(points: number, last: Mode): Segment[] {
  // modeOf's first entry of each code point is free once read: it takes the code point's mode.
  let open: number = last;
  for (let k = points - 1; k >= 0; k -= 1) {
    open = modeOf[3 * k + open]!;
    modeOf[3 * k] = open;
  }
  const segments: Segment[] = [];
  for (let k = 0; k < points;) {
    const mode = MODES[modeOf[3 * k]!]!;
    const first = k;
    let count = 0;
    for (; k < points && modeOf[3 * k] === mode; k += 1) count += bytes[k]!;
    segments.push({ mode, start: start[first]!, end: start[k]!, count: mode === BYTE ? count : k - first });
  }
  return segments;
}
