/**
 * The product's encoder against node-qrcode, over generated contents: it never picks a larger
 * version, every code it makes scans back to exactly the input, it refuses only what node-qrcode
 * cannot fit in version 10 either, and given node-qrcode's own segments at node-qrcode's version
 * it produces the very same symbol, module for module (Reed-Solomon, placement, mask choice,
 * format and version words).
 */
import fc from 'fast-check';
import QRCode from 'qrcode';
import { describe, expect, it } from 'vitest';
import { scanModules } from '@svc/testkit';
import { propertyRuns, unicodeText } from '@svc/testkit/properties';
import { ALPHANUMERIC, BYTE, NUMERIC, encodeSegments, encodeText, type QrSymbol, type Segment } from '../src/encoder/index.ts';

const DIGITS = '0123456789';
const UPPER_ALPHANUMERIC = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:';
const EMOJI = ['🚀', '✨', '👩‍💻', '🇩🇪', '👍🏽', '❤️', '😀', '🧪'];

// fast-check's default; each case encodes twice and scans once (about 2 ms).
const RUNS = propertyRuns(100);

/** Strings of `alphabet`, lengths spread over the whole range (fast-check's default size keeps them short). */
const from = (alphabet: string | readonly string[], maxLength: number, minLength = 1) =>
  fc.string({ unit: fc.constantFrom(...alphabet), minLength, maxLength, size: 'max' });

const contents = {
  digits: from(DIGITS, 520),
  'upper-case alphanumerics': from(UPPER_ALPHANUMERIC, 320),
  URLs: fc.webUrl({ withQueryParameters: true, withFragments: true }),
  'arbitrary UTF-8': unicodeText({ minLength: 1, maxLength: 120, size: 'max' }),
  graphemes: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 80, size: 'max' }),
  emoji: fc.array(fc.constantFrom(...EMOJI, ' ', 'a'), { minLength: 1, maxLength: 60, size: 'max' }).map((parts) => parts.join('')),
  mixed: fc
    .array(fc.oneof(from(DIGITS, 40), from(UPPER_ALPHANUMERIC, 40), from('abcxyz-_?=&', 20), from(['é', 'ß', '漢', '🚀'], 5)), {
      minLength: 1,
      maxLength: 16,
      size: 'max',
    })
    .map((parts) => parts.join('')),
};

/** Characters per version at level M, from the standard's capacity table, for each single mode. */
const CAPACITY: Record<'numeric' | 'alphanumeric' | 'byte', readonly number[]> = {
  numeric: [34, 63, 101, 149, 202, 255, 293, 365, 432, 513],
  alphanumeric: [20, 38, 61, 90, 122, 154, 178, 221, 262, 311],
  byte: [14, 26, 42, 62, 84, 106, 122, 152, 180, 213],
};
const ALPHABET: Record<keyof typeof CAPACITY, string> = {
  numeric: DIGITS,
  alphanumeric: UPPER_ALPHANUMERIC,
  byte: 'abcdefghijklmnopqrstuvwxyz',
};

/** Single-mode content of a version's capacity plus `delta` characters. */
const nearCapacity = fc
  .record({
    mode: fc.constantFrom(...(Object.keys(CAPACITY) as (keyof typeof CAPACITY)[])),
    version: fc.integer({ min: 1, max: 10 }),
    delta: fc.integer({ min: -3, max: 3 }),
  })
  .chain(({ mode, version, delta }) => {
    const length = CAPACITY[mode][version - 1]! + delta;
    return from(ALPHABET[mode], length, length).map((text) => ({ text, mode, version, delta }));
  });

/** Mixed content long enough to land on either side of the version 10 limit. */
const nearTheLimit = fc
  .tuple(
    fc.integer({ min: 200, max: 560 }),
    fc.array(fc.oneof(from(DIGITS, 40, 3), from(UPPER_ALPHANUMERIC, 25, 3), from('abcdefgh', 12, 1)), { minLength: 60, maxLength: 60 }),
  )
  .map(([length, parts]) => parts.join('').slice(0, length));

const rowsOf = (symbol: QrSymbol) =>
  Array.from({ length: symbol.size }, (_, y) => Array.from(symbol.modules.subarray(y * symbol.size, (y + 1) * symbol.size)));

function reference(text: string): QRCode.QRCode | undefined {
  try {
    return QRCode.create(text, { errorCorrectionLevel: 'M' });
  } catch {
    return undefined; // beyond version 40
  }
}

/** node-qrcode's segments as offsets into the text. */
function segmentsOf(reference: QRCode.QRCode): Segment[] {
  let offset = 0;
  return reference.segments.map((segment) => {
    const text = typeof segment.data === 'string' ? segment.data : new TextDecoder().decode(segment.data);
    const mode = segment.mode.id === 'Numeric' ? NUMERIC : segment.mode.id === 'Alphanumeric' ? ALPHANUMERIC : BYTE;
    const result: Segment = { mode, start: offset, end: offset + text.length, count: segment.getLength() };
    offset += text.length;
    return result;
  });
}

interface Tally {
  cases: number;
  smaller: number;
  refused: number;
}

/** Every property for one content; counts what happened so a test can show its generators reach each case. */
function check(text: string, tally: Tally): void {
  tally.cases += 1;
  const ours = encodeText(text);
  const theirs = reference(text);
  const theirsFits = theirs !== undefined && theirs.version <= 10;
  if (ours === undefined) {
    expect(theirsFits, `refused ${JSON.stringify(text)} that node-qrcode fits in version ${theirs?.version}`).toBe(false);
    tally.refused += 1;
    return;
  }
  if (theirsFits) {
    expect(ours.version).toBeLessThanOrEqual(theirs.version);
    if (ours.version < theirs.version) tally.smaller += 1;
    const same = encodeSegments(text, segmentsOf(theirs), theirs.version);
    expect(same.mask).toBe(theirs.maskPattern);
    expect(Buffer.from(same.modules).equals(Buffer.from(theirs.modules.data))).toBe(true);
  }
  expect(scanModules(rowsOf(ours))).toBe(text);
}

const newTally = (): Tally => ({ cases: 0, smaller: 0, refused: 0 });

describe('the encoder against node-qrcode', () => {
  it.each(Object.entries(contents))(
    '%s: never a larger version, same symbol for the same segments, scans to the input',
    (_label, arbitrary) => {
      const tally = newTally();
      fc.assert(
        fc.property(arbitrary, (text) => check(text, tally)),
        { numRuns: RUNS },
      );
      expect(tally.cases).toBe(RUNS);
    },
    120_000,
  );

  it('single-mode content around each version capacity: exactly the standard version, refused past version 10', () => {
    const tally = newTally();
    fc.assert(
      fc.property(nearCapacity, ({ text, version, delta }) => {
        check(text, tally);
        const expected = delta <= 0 ? version : version + 1;
        expect(encodeText(text)?.version).toBe(expected > 10 ? undefined : expected);
      }),
      { numRuns: 2 * RUNS },
    );
    expect(tally.refused).toBeGreaterThan(0);
  }, 120_000);

  it('mixed content near the version 10 limit: refused only when node-qrcode cannot fit it either', () => {
    const tally = newTally();
    fc.assert(
      fc.property(nearTheLimit, (text) => check(text, tally)),
      { numRuns: RUNS },
    );
    expect(tally.refused).toBeGreaterThan(0);
    expect(tally.refused).toBeLessThan(tally.cases);
  }, 120_000);
});
