/** The segmentation is the cheapest one: checked against an exhaustive search on short texts. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ALPHANUMERIC,
  BYTE,
  NUMERIC,
  countBits,
  optimalSegments,
  segment,
  segmentDataBits,
  singleModeSegment,
  totalBits,
  type CountWidthClass,
  type Mode,
} from '../src/encoder/segmentation.ts';

const CHARACTERS = ['0', '7', 'A', ':', ' ', 'a', 'é', '漢', '🚀'];
const canEncode = (mode: Mode, character: string) =>
  mode === BYTE || (mode === NUMERIC ? /^[0-9]$/.test(character) : /^[0-9A-Z $%*+\-./:]$/.test(character));
const utf8Bytes = (text: string) => Buffer.byteLength(text, 'utf8');

/** The fewest bits over every assignment of a mode to each character. */
function exhaustiveMinimum(characters: string[], widthClass: CountWidthClass): number {
  let best = Number.POSITIVE_INFINITY;
  const modes: Mode[] = [];
  const visit = (index: number): void => {
    if (index === characters.length) {
      let bits = 0;
      for (let start = 0; start < modes.length;) {
        let end = start;
        while (end < modes.length && modes[end] === modes[start]) end += 1;
        const mode = modes[start]!;
        const run = characters.slice(start, end);
        bits += 4 + countBits(mode, widthClass) + segmentDataBits(mode, mode === BYTE ? utf8Bytes(run.join('')) : run.length);
        start = end;
      }
      best = Math.min(best, bits);
      return;
    }
    for (const mode of [NUMERIC, ALPHANUMERIC, BYTE] as const) {
      if (!canEncode(mode, characters[index]!)) continue;
      modes.push(mode);
      visit(index + 1);
      modes.pop();
    }
  };
  visit(0);
  return best;
}

describe('segmentation', () => {
  it('costs exactly the minimum over all mode assignments, and covers the text with encodable segments', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...CHARACTERS), { minLength: 1, maxLength: 9 }),
        fc.constantFrom<CountWidthClass>(0, 1),
        (characters, widthClass) => {
          const text = characters.join('');
          const segments = segment(text, widthClass);
          expect(totalBits(segments, widthClass)).toBe(exhaustiveMinimum(characters, widthClass));
          expect(segments.map((s) => text.slice(s.start, s.end)).join('')).toBe(text);
          for (const s of segments) {
            const part = text.slice(s.start, s.end);
            expect([...part].every((character) => canEncode(s.mode, character))).toBe(true);
            expect(s.count).toBe(s.mode === BYTE ? utf8Bytes(part) : part.length);
          }
        },
      ),
      { numRuns: 1_000 },
    );
  });

  it.each([
    ['digits stay numeric', '0123456789', [NUMERIC]],
    ['a short digit run inside text is not worth a switch', 'abc123def', [BYTE]],
    ['a long digit run inside text is', `abc${'1'.repeat(20)}def`, [BYTE, NUMERIC, BYTE]],
    ['upper-case URL', 'HTTPS://EXAMPLE.COM/ABC', [ALPHANUMERIC]],
  ])('%s', (_label, text, modes) => {
    expect(segment(text, 0).map((s) => s.mode)).toEqual(modes);
  });

  it('the one-mode fast path gives what the search gives, and is taken for digits only and for text without alphanumeric characters', () => {
    const digits = fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: 1, maxLength: 600, size: 'max' });
    // No character of the alphanumeric set: lower case, punctuation outside it, UTF-8 of every length, surrogates (paired or lone).
    const bytesOnly = fc.string({
      unit: fc.constantFrom('a', 'z', '?', '=', '&', '_', '~', 'é', '漢', '🚀', '\ud800', '\udc00'),
      minLength: 1,
      maxLength: 300,
      size: 'max',
    });
    const nearly = fc
      .tuple(fc.oneof(digits, bytesOnly), fc.constantFrom('A', ' ', '7', 'a', '🚀'), fc.nat())
      .map(([text, extra, at]) => text.slice(0, at % (text.length + 1)) + extra + text.slice(at % (text.length + 1)));
    fc.assert(
      fc.property(fc.oneof(digits, bytesOnly, nearly), fc.constantFrom<CountWidthClass>(0, 1), (text, widthClass) => {
        expect(segment(text, widthClass)).toEqual(optimalSegments(text, widthClass));
      }),
      { numRuns: 3_000 },
    );
    fc.assert(
      fc.property(fc.oneof(digits, bytesOnly), (text) => {
        expect(singleModeSegment(text)).toBeDefined();
      }),
    );
    expect(singleModeSegment('abc1')).toBeUndefined();
    expect(singleModeSegment('12A')).toBeUndefined();
  });
});
