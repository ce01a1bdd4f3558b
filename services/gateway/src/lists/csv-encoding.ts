/**
 * The character encoding of an uploaded list: UTF-8 (with or without a byte-order mark) is read
 * as it is; UTF-16 with a byte-order mark (Excel's "Unicode text") is turned into UTF-8; anything
 * else is refused, instead of being read as garbage and billed: bytes that are not UTF-8 (Latin-1,
 * Windows-1252) and NUL bytes (UTF-16 without its mark).
 */
import { TextDecoder } from 'node:util';
import { ApiError } from '@svc/contracts';

const notUtf8 = (what: string): ApiError =>
  new ApiError('invalid_request', `The CSV body is not UTF-8: ${what}. Save the file as "CSV UTF-8" and send it again.`);

/** UTF-16 by its byte-order mark, if it starts with one. */
function utf16Of(start: Buffer): 'utf-16le' | 'utf-16be' | undefined {
  if (start[0] === 0xff && start[1] === 0xfe) return 'utf-16le';
  if (start[0] === 0xfe && start[1] === 0xff) return 'utf-16be';
  return undefined;
}

/** The body's bytes as UTF-8, checked as they stream; throws `invalid_request` at the first byte that cannot be. */
export async function* asUtf8(chunks: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  let pending: Buffer | undefined = Buffer.alloc(0);
  let utf16: TextDecoder | undefined;
  const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  let offset = 0;
  const pass = (chunk: Buffer): Buffer => {
    if (utf16 !== undefined) return Buffer.from(utf16.decode(chunk, { stream: true }));
    const nul = chunk.indexOf(0);
    if (nul >= 0) throw notUtf8(`it holds a NUL byte at byte ${offset + nul + 1} (UTF-16 without a byte-order mark?)`);
    try {
      utf8.decode(chunk, { stream: true });
    } catch {
      throw notUtf8(`a byte sequence near byte ${offset + 1} is not UTF-8 (Latin-1 or Windows-1252?)`);
    }
    offset += chunk.length;
    return chunk;
  };
  for await (const chunk of chunks) {
    if (pending !== undefined) {
      // The byte-order mark decides, so wait for its two bytes.
      pending = Buffer.concat([pending, chunk]);
      if (pending.length < 2) continue;
      const encoding = utf16Of(pending);
      if (encoding !== undefined) utf16 = new TextDecoder(encoding);
      const first = pending;
      pending = undefined;
      yield pass(first);
      continue;
    }
    yield pass(chunk);
  }
  if (pending !== undefined && pending.length > 0) yield pass(pending);
  if (utf16 !== undefined) {
    const rest = utf16.decode();
    if (rest !== '') yield Buffer.from(rest);
    return;
  }
  try {
    utf8.decode();
  } catch {
    throw notUtf8('it ends inside a character');
  }
}
