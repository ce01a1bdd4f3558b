/** Incremental SMTP reply parser (RFC 5321 §4.2): bytes in, complete replies out, bounded memory. */
import type { SmtpReply } from './types.ts';

/** A hostile server may send an endless line or reply; nothing legitimate comes close. */
export const MAX_REPLY_BYTES = 64 * 1024;

export interface ParsedReply extends SmtpReply {
  /** Raw text of each line after the code and separator (EHLO keywords live here). */
  lines: string[];
}

export class SmtpProtocolError extends Error {}

const LINE = /^(\d{3})(?:([ -])(.*))?$/s;
const ENHANCED = /^([245])\.(\d{1,3})\.(\d{1,3})(?=\s|$)/;
/** A status inside the text: not part of a longer number (an IP address, a version), subject 0-7 as RFC 3463 defines. */
const ENHANCED_INSIDE = /(?<![\w.])#?([245])\.([0-7])\.(\d{1,3})(?![\w]|\.\d)/;
// eslint-disable-next-line no-control-regex -- stripping control characters is the point
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f]/g;

export class ReplyParser {
  private partial: Buffer[] = [];
  private partialBytes = 0;
  private lines: string[] = [];
  private replyBytes = 0;

  /** Feeds bytes; returns the replies they complete. Throws SmtpProtocolError on garbage or excess. */
  push(chunk: Buffer): ParsedReply[] {
    const out: ParsedReply[] = [];
    let start = 0;
    for (let nl = chunk.indexOf(0x0a); nl !== -1; nl = chunk.indexOf(0x0a, start)) {
      this.addBytes(nl - start + 1);
      this.partial.push(chunk.subarray(start, nl));
      const line = Buffer.concat(this.partial).toString('utf8').replace(/\r$/, '');
      this.partial = [];
      this.partialBytes = 0;
      start = nl + 1;
      const reply = this.addLine(line);
      if (reply) out.push(reply);
    }
    if (start < chunk.length) {
      this.addBytes(chunk.length - start);
      this.partial.push(Buffer.from(chunk.subarray(start)));
      this.partialBytes += chunk.length - start;
    }
    return out;
  }

  /** True when bytes of an unfinished reply are buffered. */
  get pending(): boolean {
    return this.partialBytes > 0 || this.lines.length > 0;
  }

  private addBytes(n: number): void {
    this.replyBytes += n;
    if (this.replyBytes > MAX_REPLY_BYTES) throw new SmtpProtocolError(`reply longer than ${MAX_REPLY_BYTES} bytes`);
  }

  private addLine(line: string): ParsedReply | undefined {
    const m = LINE.exec(line);
    if (!m) throw new SmtpProtocolError(`malformed reply line: ${JSON.stringify(line.slice(0, 80))}`);
    const [, code = '', sep, text = ''] = m;
    this.lines.push(text);
    if (sep === '-') return undefined;
    // Lenient on continuation lines carrying another code (seen in the wild): the last line decides.
    const reply = buildReply(Number(code), this.lines);
    this.lines = [];
    this.replyBytes = 0;
    return reply;
  }
}

/**
 * The reply's RFC 3463 status: where RFC 2034 puts it, at the start of a line (the first line
 * first; Exchange and GMX put it on the last), else written inside the text as servers also do
 * (`#5.1.1`, `(#5.1.1)` from qmail and IronPort, `cuda_nsu 5.1.1` from Barracuda, a backend's
 * status quoted). Only a status of the reply code's class counts.
 */
function enhancedStatus(code: number, lines: string[]): string | undefined {
  const status = (match: RegExpExecArray | null): string | undefined =>
    match !== null && match[1] === String(code)[0] ? `${match[1]}.${Number(match[2])}.${Number(match[3])}` : undefined;
  for (const line of lines) {
    const found = status(ENHANCED.exec(line));
    if (found !== undefined) return found;
  }
  for (const line of lines) {
    const found = status(ENHANCED_INSIDE.exec(line));
    if (found !== undefined) return found;
  }
  return undefined;
}

export function buildReply(code: number, lines: string[]): ParsedReply {
  const enhanced = enhancedStatus(code, lines);
  const texts = lines.map((line) => {
    const leading = ENHANCED.exec(line);
    const same = leading !== null && `${leading[1]}.${Number(leading[2])}.${Number(leading[3])}` === enhanced;
    return (same ? line.slice(leading[0].length) : line).replace(CONTROL, '').trim();
  });
  const text = texts.filter((t) => t !== '').join(' ');
  return enhanced ? { code, enhanced, text, lines } : { code, text, lines };
}

/** EHLO keywords (upper case), one per continuation line after the greeting line. */
export function ehloKeywords(reply: ParsedReply): Set<string> {
  return new Set(reply.lines.slice(1).map((l) => (l.trim().split(/\s+/)[0] ?? '').toUpperCase()));
}

export function publicReply(reply: ParsedReply): SmtpReply {
  return reply.enhanced ? { code: reply.code, enhanced: reply.enhanced, text: reply.text } : { code: reply.code, text: reply.text };
}
