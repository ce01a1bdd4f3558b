/**
 * Address syntax as real mail servers accept it (RFC 5321 path, RFC 5322 dot-atom, RFC 6531
 * UTF-8 local parts), and the normalised form that goes into SMTP.
 *
 * Decisions: quoted local parts (`"a b"@x`) and IP-literal domains (`a@[1.2.3.4]`) are reported
 * invalid on purpose. Both are vanishingly rare in real lists, quoted forms are the usual vehicle
 * for smuggling spaces and command text into SMTP, and IP literals would bypass MX lookup and the
 * private-address guard. Nothing that passes can contain CR, LF, NUL, `<`, `>`, a space or any
 * control character, so an address can never inject a second SMTP command. Any string at all is
 * an input: lone surrogates, format characters (right-to-left and other bidi marks, zero-width
 * characters, the BOM), private-use and unassigned code points fail as `forbidden_char`, so
 * nothing downstream (IDN conversion, the typo suggester, SMTP) ever sees them.
 */
import { domainToASCII, domainToUnicode } from 'node:url';

export type SyntaxFailureKind = 'empty' | 'forbidden_char' | 'no_at' | 'local_invalid' | 'domain_invalid' | 'too_long';

export interface ParsedAddress {
  ok: true;
  local: string;
  /** A-label form, lower case: what DNS and SMTP see. */
  domain: string;
  unicodeDomain: string;
  /** `local@domain`, the form sent in RCPT TO (smtp/guard.ts tells whether it needs SMTPUTF8). */
  address: string;
}

export interface SyntaxFailure {
  ok: false;
  kind: SyntaxFailureKind;
}

const LIMITS = { local: 64, domain: 253, path: 254, input: 1_000 };
// Unicode "other" (controls, format and bidi marks, lone surrogates, private use, unassigned),
// separators and whitespace of any script, angle brackets.
const FORBIDDEN = /[\p{C}\p{Z}\s<>]/u;
// atext of RFC 5322 plus any non-ASCII character (RFC 6531), dot-separated.
const ATOM = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~\\-\\u0080-\\u{10FFFF}]+";
const DOT_ATOM = new RegExp(`^${ATOM}(?:\\.${ATOM})*$`, 'u');
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

const fail = (kind: SyntaxFailureKind): SyntaxFailure => ({ ok: false, kind });
const octets = (value: string) => Buffer.byteLength(value, 'utf8');

function parseDomain(raw: string): { ascii: string; unicode: string } | undefined {
  if (raw.startsWith('[') || raw.endsWith('.')) return undefined;
  const ascii = domainToASCII(raw).toLowerCase();
  if (ascii === '' || ascii.length > LIMITS.domain) return undefined;
  const labels = ascii.split('.');
  if (labels.length < 2 || !labels.every((label) => LABEL.test(label))) return undefined;
  if (/^\d+$/.test(labels.at(-1)!)) return undefined; // a numeric TLD is an IP address, not a domain
  return { ascii, unicode: domainToUnicode(ascii) };
}

export function parseAddress(input: string): ParsedAddress | SyntaxFailure {
  if (input.length > LIMITS.input) return fail('too_long');
  const trimmed = input.replace(/^[ \t]+|[ \t]+$/g, '');
  if (trimmed === '') return fail('empty');
  if (FORBIDDEN.test(trimmed)) return fail('forbidden_char');
  const at = trimmed.lastIndexOf('@');
  if (at < 0) return fail('no_at');
  const local = trimmed.slice(0, at);
  if (local === '' || !DOT_ATOM.test(local)) return fail('local_invalid');
  if (octets(local) > LIMITS.local) return fail('too_long');
  const domain = parseDomain(trimmed.slice(at + 1));
  if (domain === undefined) return fail('domain_invalid');
  const address = `${local}@${domain.ascii}`;
  if (octets(address) > LIMITS.path) return fail('too_long');
  return { ok: true, local, domain: domain.ascii, unicodeDomain: domain.unicode, address };
}
