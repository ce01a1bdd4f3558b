/**
 * Where the quotes of an upload went wrong. csv-parse says what is wrong but not where: an
 * unclosed quote is found only at the end of the file, and its error carries the end's line.
 * This follows the decoded text fed to the parser with RFC 4180's quote rules as the parser is
 * configured (csv-upload.ts: `"` quotes and escapes, one delimiter, CR, LF or CRLF between
 * records) and keeps the first place of each kind of fault, so that a refusal names the line and
 * the byte of the file as sent, as the encoding refusals do (csv-encoding.ts).
 */
import type { FilePosition } from './csv-encoding.ts';

const QUOTE = 0x22;
const CR = 0x0d;
const LF = 0x0a;

/** Where a character is, counted three ways: which one is the file's bytes depends on its encoding. */
interface TextPosition {
  line: number;
  /** 0-based offsets in the decoded UTF-8, in code points and in UTF-16 code units. */
  utf8: number;
  codePoints: number;
  utf16Units: number;
}

type State = 'fieldStart' | 'unquoted' | 'quoted' | 'quoteInQuoted';

export class QuoteTracker {
  private state: State = 'fieldStart';
  private line = 1;
  private afterCr = false;
  private utf8 = 0;
  private codePoints = 0;
  private utf16Units = 0;
  private openedAt: TextPosition | undefined;
  /** A quote in a field that did not start with one (csv-parse: INVALID_OPENING_QUOTE). */
  stray: TextPosition | undefined;
  /** A closing quote followed by something else than a delimiter or a line end (CSV_INVALID_CLOSING_QUOTE). */
  badClose: TextPosition | undefined;
  private closingAt: TextPosition | undefined;

  constructor(private readonly delimiter: number) {}

  /** The quote that opened the field still open at the end (CSV_QUOTE_NOT_CLOSED). */
  get unclosed(): TextPosition | undefined {
    return this.state === 'quoted' ? this.openedAt : undefined;
  }

  private here(): TextPosition {
    return { line: this.line, utf8: this.utf8, codePoints: this.codePoints, utf16Units: this.utf16Units };
  }

  /** Follows `chunk`, UTF-8 that continues what came before (quotes and separators are ASCII: never inside a character). */
  scan(chunk: Uint8Array): void {
    for (const byte of chunk) {
      const lineEnd = byte === CR || byte === LF;
      const separator = byte === this.delimiter || lineEnd;
      switch (this.state) {
        case 'fieldStart':
          if (byte === QUOTE) {
            this.state = 'quoted';
            this.openedAt = this.here();
          } else if (!separator) this.state = 'unquoted';
          break;
        case 'unquoted':
          if (byte === QUOTE) this.stray ??= this.here();
          else if (separator) this.state = 'fieldStart';
          break;
        case 'quoted':
          if (byte === QUOTE) {
            this.state = 'quoteInQuoted';
            this.closingAt = this.here();
          }
          break;
        case 'quoteInQuoted':
          // `""` is an escaped quote; after a closing one only a separator may come.
          if (byte === QUOTE) this.state = 'quoted';
          else if (separator) this.state = 'fieldStart';
          else {
            this.badClose ??= this.closingAt;
            this.state = 'unquoted';
          }
          break;
      }
      if (lineEnd) {
        if (byte === CR || !this.afterCr) this.line += 1;
        this.afterCr = byte === CR;
      } else this.afterCr = false;
      this.utf8 += 1;
      // A byte that starts a character; one that starts a 4-byte character is two UTF-16 units.
      if ((byte & 0xc0) !== 0x80) {
        this.codePoints += 1;
        this.utf16Units += byte >= 0xf0 ? 2 : 1;
      }
    }
  }
}

/**
 * The 1-based position in the file as sent, for a text read as `encoding` (UploadDecoder): UTF-8
 * byte for byte, UTF-16 two bytes a code unit, after a byte-order mark if it had one; the
 * single-byte encodings (Windows-1252, a `charset` such as ISO-8859-2) one byte a character.
 */
export function filePosition(where: TextPosition, encoding: string, hadBom: boolean): FilePosition {
  if (encoding === 'utf-8') return { line: where.line, byte: (hadBom ? 3 : 0) + where.utf8 + 1 };
  if (encoding.startsWith('utf-16')) return { line: where.line, byte: (hadBom ? 2 : 0) + 2 * where.utf16Units + 1 };
  return { line: where.line, byte: where.codePoints + 1 };
}
