/**
 * What property tests (fast-check) share: how many cases they try, and an arbitrary of any Unicode
 * text that costs nothing to set up. Its own entry (`@svc/testkit/properties`), so that the fast
 * tier's files import no Redis or process helper with it.
 */
import fc from 'fast-check';

/**
 * How many cases a property test tries: the figure its file gives (sized so that `npm test` stays
 * quick) times PROPERTY_RUNS_SCALE, for a deeper run before a release or after a change to an
 * encoder or a parser (`PROPERTY_RUNS_SCALE=10 npm test -- services/qr-worker`).
 */
export function propertyRuns(runs: number): number {
  const raw = process.env.PROPERTY_RUNS_SCALE;
  const scale = raw === undefined || raw === '' ? 1 : Number(raw);
  if (!Number.isFinite(scale) || scale <= 0) throw new Error(`PROPERTY_RUNS_SCALE must be a positive number, not ${raw}`);
  return Math.max(1, Math.round(runs * scale));
}

const SURROGATES = 0xe000 - 0xd800;

/** One code point of U+0000..U+10FFFF other than U+D800..U+DFFF, as a string. */
const scalarValue = fc.integer({ min: 0, max: 0x10ffff - SURROGATES }).map((n) => String.fromCodePoint(n < 0xd800 ? n : n + SURROGATES));

/**
 * Text of any Unicode scalar values (every code point but the surrogates), as fast-check's
 * `fc.string({ unit: 'binary' })` makes it. That unit builds a reverse map of all 1.1 million code
 * points per arbitrary the first time a property runs it, about 0.7 s of CPU each (five such
 * arbitraries cost `npm test` some 4 s); this one maps an integer instead and costs nothing to set up.
 */
export function unicodeText(constraints: Omit<fc.StringConstraints, 'unit'> = {}): fc.Arbitrary<string> {
  return fc.string({ ...constraints, unit: scalarValue });
}
