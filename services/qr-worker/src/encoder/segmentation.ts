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

const isHighSurrogate = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;
const isLowSurrogate = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff;

/** UTF-16 units taken by the code point at `index`: 2 for a surrogate pair, else 1. */
function codePointWidth(text: string, index: number): 1 | 2 {
  return isHighSurrogate(text.charCodeAt(index)) && isLowSurrogate(text.charCodeAt(index + 1)) ? 2 : 1;
}

/** UTF-8 bytes of the code point at `index` (a lone surrogate is written as U+FFFD, 3 bytes). */
function utf8Length(unit: number, width: 1 | 2): number {
  if (width === 2) return 4;
  if (unit < 0x80) return 1;
  return unit < 0x800 ? 2 : 3;
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

export function segment(text: string, widthClass: CountWidthClass): Segment[] {
  const header = Int32Array.from(MODES, (mode) => 6 * (4 + countBits(mode, widthClass)));
  // cost[mode]: the cheapest encoding of the code points so far that leaves a `mode` segment open.
  const cost = Int32Array.from(header);
  // modeOf[3 * k + open]: the mode of code point k on the cheapest path that leaves `open` open after it.
  const modeOf: Mode[] = [];
  const starts: number[] = [];
  for (let index = 0; index < text.length;) {
    const unit = text.charCodeAt(index);
    const width = codePointWidth(text, index);
    starts.push(index);
    index += width;
    const value = unit < 128 ? ALPHANUMERIC_VALUE[unit]! : -1;
    // Continue each open segment with this code point.
    cost[NUMERIC] = value >= 0 && value < 10 ? cost[NUMERIC]! + 20 : UNREACHABLE;
    cost[ALPHANUMERIC] = value >= 0 ? cost[ALPHANUMERIC]! + 33 : UNREACHABLE;
    cost[BYTE] = cost[BYTE]! + 48 * utf8Length(unit, width);
    if (index >= text.length) {
      modeOf.push(NUMERIC, ALPHANUMERIC, BYTE);
      break;
    }
    // Or end the cheapest other segment here and open this mode for the next code point.
    const numericEnd = cost[NUMERIC] >= UNREACHABLE ? UNREACHABLE : Math.ceil(cost[NUMERIC] / 6) * 6;
    const alphanumericEnd = cost[ALPHANUMERIC] >= UNREACHABLE ? UNREACHABLE : Math.ceil(cost[ALPHANUMERIC] / 6) * 6;
    const byteEnd = Math.ceil(cost[BYTE] / 6) * 6;
    modeOf.push(
      open(cost, NUMERIC, header[NUMERIC]!, ALPHANUMERIC, alphanumericEnd, BYTE, byteEnd),
      open(cost, ALPHANUMERIC, header[ALPHANUMERIC]!, NUMERIC, numericEnd, BYTE, byteEnd),
      open(cost, BYTE, header[BYTE]!, NUMERIC, numericEnd, ALPHANUMERIC, alphanumericEnd),
    );
  }
  starts.push(text.length);
  return segmentsFromPath(text, modeOf, starts, cheapest(cost));
}

/** Lowers cost[mode] when switching from one of the two other modes is cheaper; returns the mode switched from. */
function open(cost: Int32Array, mode: Mode, header: number, first: Mode, firstEnd: number, second: Mode, secondEnd: number): Mode {
  let from = mode;
  if (firstEnd + header < cost[mode]!) {
    cost[mode] = firstEnd + header;
    from = first;
  }
  if (secondEnd + header < cost[mode]!) {
    cost[mode] = secondEnd + header;
    from = second;
  }
  return from;
}

function cheapest(cost: Int32Array): Mode {
  let best: Mode = NUMERIC;
  for (const mode of MODES) if (Math.ceil(cost[mode]! / 6) < Math.ceil(cost[best]! / 6)) best = mode;
  return best;
}

function segmentsFromPath(text: string, modeOf: readonly Mode[], starts: readonly number[], last: Mode): Segment[] {
  const points = starts.length - 1;
  const modes: Mode[] = new Array<Mode>(points);
  let open = last;
  for (let k = points - 1; k >= 0; k -= 1) {
    open = modeOf[3 * k + open]!;
    modes[k] = open;
  }
  const segments: Segment[] = [];
  for (let k = 0; k < points;) {
    const mode = modes[k]!;
    const first = k;
    let bytes = 0;
    for (; k < points && modes[k] === mode; k += 1) {
      if (mode === BYTE) bytes += utf8Length(text.charCodeAt(starts[k]!), starts[k + 1]! - starts[k]! === 2 ? 2 : 1);
    }
    segments.push({ mode, start: starts[first]!, end: starts[k]!, count: mode === BYTE ? bytes : k - first });
  }
  return segments;
}
