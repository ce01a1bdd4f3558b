/**
 * The QR encoder at level M, versions 1..10: the smallest version that holds the text under its
 * optimal mixed segmentation (numeric, alphanumeric and UTF-8 bytes), so digits-only content fits
 * 513 characters at version 10 while bytes fit 213, and the mask with the lowest penalty. Text
 * that needs a version above 10 has no symbol (the job answers `content_too_long`). The SVG, PNG
 * and JSON renderers live apart (../svg.ts, ../png.ts, ../matrix.ts) and see only the module matrix.
 */
import { dataCodewords, interleavedCodewords } from './codewords.ts';
import { MAX_VERSION, MIN_VERSION, dataCodewordCount } from './level-m-tables.ts';
import { bestMask, maskedRows } from './mask-penalty.ts';
import { segment, totalBits, type Segment } from './segmentation.ts';
import { EncodedSymbol, type QrSymbol } from './symbol.ts';
import { scratchFor } from './scratch.ts';
import { placeCodewords, symbolTemplate } from './symbol-template.ts';

export { MAX_VERSION } from './level-m-tables.ts';
export { BYTE, NUMERIC, ALPHANUMERIC, type Mode, type Segment } from './segmentation.ts';
export type { ModuleMatrix, QrSymbol } from './symbol.ts';

/** The smallest version and its segments, or undefined when the text needs more than version 10. */
function chooseVersion(text: string): { version: number; segments: Segment[] } | undefined {
  // Versions 1..9 share one width of character-count fields, version 10 has wider ones.
  const narrow = segment(text, 0);
  const narrowBits = totalBits(narrow, 0);
  for (let version = MIN_VERSION; version < 10; version += 1) {
    if (narrowBits <= 8 * dataCodewordCount(version)) return { version, segments: narrow };
  }
  const wide = segment(text, 1);
  return totalBits(wide, 1) <= 8 * dataCodewordCount(MAX_VERSION) ? { version: MAX_VERSION, segments: wide } : undefined;
}

/** Encodes given segments at a given version (they must fit it). */
export function encodeSegments(text: string, segments: readonly Segment[], version: number): QrSymbol {
  const template = symbolTemplate(version);
  const scratch = scratchFor(version);
  const codewords = interleavedCodewords(dataCodewords(text, segments, version, scratch.data), version, scratch.codewords);
  const unmasked = placeCodewords(template, codewords, scratch.unmasked);
  const mask = bestMask(template, unmasked.rows, unmasked.columns);
  return new EncodedSymbol(version, template.size, mask, maskedRows(template, unmasked.rows, mask));
}

/** The symbol of `text`, or undefined when it needs more than version 10. */
export function encodeText(text: string): QrSymbol | undefined {
  const chosen = chooseVersion(text);
  return chosen === undefined ? undefined : encodeSegments(text, chosen.segments, chosen.version);
}
