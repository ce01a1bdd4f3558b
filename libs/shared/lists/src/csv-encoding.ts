/**
 * The character encoding of an uploaded list, turned into UTF-8 as the body streams:
 * - a `charset` on the Content-Type wins (any encoding a browser knows: `windows-1252`, `utf-16`, ...);
 * - else a byte-order mark: UTF-8, or UTF-16 LE/BE (Excel's "Unicode text");
 * - else UTF-8, unless the file proves not to be: the first non-ASCII bytes (up to 64 KiB of them
 *   from there) decide, and bytes that are not UTF-8 make it Windows-1252, what Excel on Western
 *   Windows writes as "CSV". Everything before them was ASCII, read the same either way, so the
 *   body never has to be held whole to decide.
 * Control bytes other than tab and line ends mean a binary file (a workbook renamed .csv): refused,
 * like bytes that are not UTF-8 once UTF-8 was decided, naming the line and byte where it happened.
 */
import { TextDecoder } from 'node:util';
import { ApiError } from '@svc/contracts';

/** Bytes looked at from the first non-ASCII byte before deciding between UTF-8 and Windows-1252. */
const DECIDE_WINDOW = 64 * 1024;
const UTF8_BOM = [0xef, 0xbb, 0xbf];

/** Where in the file: 1-based line and byte. */
export interface FilePosition {
  line: number;
  byte: number;
}

export const refusal = (what: string, where: FilePosition, advice: string): ApiError =>
  new ApiError('invalid_request', `The CSV file ${what} at line ${where.line}, byte ${where.byte}. ${advice}`, {
    details: { line: where.line, byte: where.byte },
  });

/** Signatures of files people upload by mistake, said in their terms. */
const SIGNATURES: Array<[bytes: number[], what: string]> = [
  [[0x50, 0x4b, 0x03, 0x04], 'an Excel workbook (.xlsx) or another ZIP file'],
  [[0xd0, 0xcf, 0x11, 0xe0], 'an old Excel workbook (.xls)'],
  [[0x25, 0x50, 0x44, 0x46], 'a PDF document'],
];

/** A control character no text file holds (tab, line ends, VT, FF and DOS's end-of-file mark are fine). */
const isForbiddenControl = (code: number): boolean =>
  code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0b && code !== 0x0c && code !== 0x0d && code !== 0x1a;
/** Bytes Windows-1252 leaves undefined: text in that encoding never holds them. */
const CP1252_UNDEFINED = [0x81, 0x8d, 0x8f, 0x90, 0x9d];
/** Per byte value: 1 if it is refused, as a table (a check per byte of 16 MiB). */
const FORBIDDEN = Uint8Array.from({ length: 256 }, (_, value) => (isForbiddenControl(value) ? 1 : 0));
const FORBIDDEN_CP1252 = Uint8Array.from(FORBIDDEN, (refused, value) => (refused === 1 || CP1252_UNDEFINED.includes(value) ? 1 : 0));

/**
 * How far `bytes` is UTF-8: `valid` bytes from the start hold whole characters; `bad` says whether
 * what follows is not UTF-8 (else it is the start of a character cut at the end of the buffer).
 */
export function utf8Prefix(bytes: Uint8Array): { valid: number; bad: boolean } {
  let i = 0;
  while (i < bytes.length) {
    const lead = bytes[i]!;
    if (lead < 0x80) {
      i += 1;
      continue;
    }
    // The continuation bytes a lead byte takes, and the range of the first (RFC 3629's table).
    let need: number;
    let low = 0x80;
    let high = 0xbf;
    if (lead >= 0xc2 && lead <= 0xdf) need = 1;
    else if (lead >= 0xe0 && lead <= 0xef) {
      need = 2;
      if (lead === 0xe0) low = 0xa0;
      if (lead === 0xed) high = 0x9f;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      need = 3;
      if (lead === 0xf0) low = 0x90;
      if (lead === 0xf4) high = 0x8f;
    } else return { valid: i, bad: true };
    for (let k = 1; k <= need; k += 1) {
      if (i + k >= bytes.length) return { valid: i, bad: false };
      const next = bytes[i + k]!;
      if (next < (k === 1 ? low : 0x80) || next > (k === 1 ? high : 0xbf)) return { valid: i, bad: true };
    }
    i += need + 1;
  }
  return { valid: i, bad: false };
}

/**
 * Windows-1252's letters at 0x80..0x9F (€, „, “, Š, ...), where Latin-1 has control codes. Node 20's
 * TextDecoder reads `windows-1252` as Latin-1 (nodejs/node#56542), so the table is here; the five
 * bytes Windows-1252 leaves undefined are refused before this (CP1252_UNDEFINED).
 */
const CP1252_HIGH = '€\u0081‚ƒ„…†‡ˆ‰Š‹Œ\u008dŽ\u008f\u0090‘’“”•–—˜™š›œ\u009džŸ';

/** A TextDecoder's `decode`, or Windows-1252 by the table (one byte, one character: nothing to carry between chunks). */
interface Decoder {
  readonly encoding: string;
  decode(bytes: Uint8Array, options?: { stream?: boolean }): string;
}

const windows1252: Decoder = {
  encoding: 'windows-1252',
  decode: (bytes) =>
    Buffer.from(bytes)
      .toString('latin1')
      .replace(/[\u0080-\u009f]/g, (c) => CP1252_HIGH[c.charCodeAt(0) - 0x80]!),
};

type Mode = { kind: 'ascii' } | { kind: 'utf-8' } | { kind: 'decoder'; decoder: Decoder; utf16: boolean };

/** Bytes of a buffer, or UTF-16 code units of a string (2 bytes each). */
type Units = Uint8Array | string;
const unitAt = (units: Units, i: number): number => (typeof units === 'string' ? units.charCodeAt(i) : units[i]!);

/** Counts lines and bytes of what has gone through, to say where a refusal happened. */
class Tracker {
  line = 1;
  byte = 0;
  private afterCr = false;

  /** Where unit `index` of `units` (not counted yet) is in the file. */
  at(units: Units, index: number): FilePosition {
    const probe = new Tracker();
    probe.line = this.line;
    probe.afterCr = this.afterCr;
    probe.count(units, index);
    return { line: probe.line, byte: this.byte + index * (typeof units === 'string' ? 2 : 1) + 1 };
  }

  count(units: Units, end: number): void {
    for (let i = 0; i < end; i += 1) {
      const unit = unitAt(units, i);
      if (unit > 0x0d) {
        this.afterCr = false;
        continue;
      }
      if (unit === 0x0d || (unit === 0x0a && !this.afterCr)) this.line += 1;
      this.afterCr = unit === 0x0d;
    }
    this.byte += end * (typeof units === 'string' ? 2 : 1);
  }
}

/** The body as UTF-8, and which encoding it was read in (known for sure once the body has been read). */
export class UploadDecoder {
  private mode: Mode = { kind: 'ascii' };
  private readonly tracker = new Tracker();
  /** Bytes held back: the start of a character cut by a chunk's end, or the window being decided on. */
  private held: Buffer = Buffer.alloc(0);
  private deciding = false;
  private started = false;
  /** The encoding a `charset` parameter names. */
  private readonly charset: string | undefined;
  /** `charset=utf-16`: the byte-order mark says which (little-endian without one, as browsers read it). */
  private readonly eitherUtf16: boolean;
  /** The file started with a byte-order mark. */
  hadBom = false;
  /** The first bytes alternate with NULs: UTF-16 without its byte-order mark, most likely. */
  private utf16Unmarked = false;

  constructor(charset?: string) {
    this.eitherUtf16 = charset?.trim().toLowerCase() === 'utf-16';
    if (charset === undefined) return;
    try {
      this.charset = new TextDecoder(charset).encoding;
    } catch {
      throw new ApiError(
        'invalid_request',
        `The Content-Type names charset=${charset}, which is not an encoding this service reads; send utf-8 or windows-1252, or leave charset out.`,
      );
    }
  }

  /** The encoding the file is read in: `utf-8` while nothing said otherwise. */
  get encoding(): string {
    return this.mode.kind === 'decoder' ? this.mode.decoder.encoding : 'utf-8';
  }

  async *decode(chunks: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    for await (const chunk of chunks) yield* this.take(chunk, false);
    yield* this.take(Buffer.alloc(0), true);
  }

  private *take(chunk: Buffer, end: boolean): Generator<Buffer> {
    let bytes: Buffer = this.held.length === 0 ? chunk : Buffer.concat([this.held, chunk]);
    this.held = Buffer.alloc(0);
    if (!this.started) {
      if (bytes.length < 4 && !end) {
        this.held = bytes;
        return;
      }
      this.started = true;
      bytes = this.begin(bytes);
    }
    if (this.deciding) {
      if (bytes.length < DECIDE_WINDOW && !end) {
        this.held = bytes;
        return;
      }
      this.deciding = false;
      // Not UTF-8: a byte sequence it forbids, or a character the file ends in the middle of.
      const { valid, bad } = utf8Prefix(bytes);
      this.mode = bad || (end && valid < bytes.length) ? this.decoderOf('windows-1252') : { kind: 'utf-8' };
    }
    yield* this.emit(bytes, end);
  }

  /** Reads what the file's first bytes say: a byte-order mark, a workbook's signature. */
  private begin(bytes: Buffer): Buffer {
    for (const [signature, what] of SIGNATURES)
      if (signature.every((value, i) => bytes[i] === value))
        throw new ApiError('invalid_request', `The file is ${what}, not CSV. Save it as "CSV UTF-8" (File > Save As) and send that.`);
    const utf8Bom = UTF8_BOM.every((value, i) => bytes[i] === value);
    const utf16 = bytes[0] === 0xff && bytes[1] === 0xfe ? 'utf-16le' : bytes[0] === 0xfe && bytes[1] === 0xff ? 'utf-16be' : undefined;
    const charset = this.eitherUtf16 && utf16 !== undefined ? utf16 : this.charset;
    if (charset !== undefined && charset !== 'utf-8') {
      this.mode = this.decoderOf(charset);
      const bom = (charset === 'utf-16le' && utf16 === 'utf-16le') || (charset === 'utf-16be' && utf16 === 'utf-16be');
      return this.skipBom(bytes, bom ? 2 : 0);
    }
    if (charset === 'utf-8' || utf8Bom) {
      this.mode = { kind: 'utf-8' };
      return this.skipBom(bytes, utf8Bom ? 3 : 0);
    }
    if (utf16 !== undefined) {
      this.mode = this.decoderOf(utf16);
      return this.skipBom(bytes, 2);
    }
    this.utf16Unmarked = (bytes[1] === 0 && bytes[3] === 0 && bytes[0] !== 0) || (bytes[0] === 0 && bytes[2] === 0 && bytes[1] !== 0);
    return bytes;
  }

  private skipBom(bytes: Buffer, length: number): Buffer {
    if (length === 0) return bytes;
    this.hadBom = true;
    this.tracker.byte += length;
    return bytes.subarray(length);
  }

  private decoderOf(encoding: string): Mode {
    const decoder = encoding === 'windows-1252' ? windows1252 : new TextDecoder(encoding, { fatal: true, ignoreBOM: true });
    return { kind: 'decoder', decoder, utf16: decoder.encoding.startsWith('utf-16') };
  }

  private *emit(bytes: Buffer, end: boolean): Generator<Buffer> {
    const mode = this.mode;
    if (mode.kind === 'decoder') {
      if (!mode.utf16) this.checkBytes(bytes, 0, bytes.length, mode.decoder.encoding === 'windows-1252');
      let text: string;
      try {
        text = mode.decoder.decode(bytes, { stream: !end });
      } catch {
        throw refusal(`is not ${mode.decoder.encoding}`, this.undecodable(mode, bytes), 'Check the charset you sent.');
      }
      if (mode.utf16) this.checkUtf16(text);
      else this.tracker.count(bytes, bytes.length);
      if (text !== '') yield Buffer.from(text);
      return;
    }
    if (mode.kind === 'ascii') {
      const firstHigh = bytes.findIndex((value) => value >= 0x80);
      const ascii = firstHigh < 0 ? bytes.length : firstHigh;
      this.checkBytes(bytes, 0, ascii, false);
      this.tracker.count(bytes, ascii);
      if (ascii > 0) yield bytes.subarray(0, ascii);
      if (firstHigh < 0) return;
      this.deciding = true;
      yield* this.take(bytes.subarray(firstHigh), end);
      return;
    }
    const { valid, bad } = utf8Prefix(bytes);
    this.checkBytes(bytes, 0, valid, false);
    if (bad)
      throw refusal(
        `is not UTF-8 (byte 0x${bytes[valid]!.toString(16).toUpperCase().padStart(2, '0')})`,
        this.tracker.at(bytes, valid),
        'If it is Windows-1252 (Excel\'s "CSV"), send it with Content-Type: text/csv; charset=windows-1252; else save it as "CSV UTF-8".',
      );
    if (end && valid < bytes.length)
      throw refusal('ends inside a character', this.tracker.at(bytes, valid), 'The file is cut short or not UTF-8.');
    this.tracker.count(bytes, valid);
    this.held = bytes.subarray(valid);
    if (valid > 0) yield bytes.subarray(0, valid);
  }

  /**
   * Where `bytes` stop being `mode`'s encoding: in UTF-16 the first character a lenient decoder
   * replaces (two bytes a code unit); in other encodings, where the bytes do not map one to one,
   * the start of the chunk.
   */
  private undecodable(mode: Extract<Mode, { kind: 'decoder' }>, bytes: Buffer): FilePosition {
    if (!mode.utf16) return { line: this.tracker.line, byte: this.tracker.byte + 1 };
    const text = new TextDecoder(mode.decoder.encoding, { ignoreBOM: true }).decode(bytes);
    return this.tracker.at(text, Math.max(0, text.indexOf('\ufffd')));
  }

  /** Refuses a control byte (and, in Windows-1252, a byte it leaves undefined) in `bytes[from..to)`. */
  private checkBytes(bytes: Buffer, from: number, to: number, cp1252: boolean): void {
    const table = cp1252 ? FORBIDDEN_CP1252 : FORBIDDEN;
    for (let i = from; i < to; i += 1) if (table[bytes[i]!] === 1) throw this.binary(bytes[i]!, this.tracker.at(bytes, i));
  }

  private checkUtf16(text: string): void {
    for (let i = 0; i < text.length; i += 1) {
      const code = text.charCodeAt(i);
      if (isForbiddenControl(code)) throw this.binary(code, this.tracker.at(text, i));
    }
    this.tracker.count(text, text.length);
  }

  private binary(value: number, where: FilePosition): ApiError {
    if (value === 0 && this.utf16Unmarked)
      return refusal(
        'holds NUL bytes between its letters',
        where,
        'It looks like UTF-16 without a byte-order mark: send it with Content-Type: text/csv; charset=utf-16le (or utf-16be), or save it as "CSV UTF-8".',
      );
    return refusal(
      `holds a control character (0x${value.toString(16).toUpperCase().padStart(2, '0')}), so it is not text`,
      where,
      'It looks like a binary file (a workbook renamed .csv?): export it as "CSV UTF-8" and send that.',
    );
  }
}
