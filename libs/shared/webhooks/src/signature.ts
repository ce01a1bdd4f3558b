/**
 * The signature scheme: `X-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">` under
 * the key's webhook secret (the whole `whsec_...` string, as UTF-8, is the HMAC key). The
 * timestamp is inside the signed text, so a captured request cannot be replayed with a fresh `t`;
 * receivers refuse timestamps outside their tolerance. Each attempt is signed anew: its `t` is the
 * time of that attempt and its key the secret current at that moment.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-signature';
export const EVENT_ID_HEADER = 'x-event-id';
/** What receivers should accept by default: five minutes either way. */
export const DEFAULT_TOLERANCE_S = 300;

const MAX_HEADER_LENGTH = 2_048;

function digest(secret: string, t: number, body: string | Uint8Array): Buffer {
  const hmac = createHmac('sha256', secret).update(`${t}.`, 'utf8');
  if (typeof body === 'string') hmac.update(body, 'utf8');
  else hmac.update(body);
  return hmac.digest();
}

/** The X-Signature value for `body` sent at `t` (unix seconds). */
export function signatureHeader(secret: string, body: string, t: number): string {
  if (!Number.isSafeInteger(t) || t < 0) throw new RangeError(`timestamp must be whole unix seconds, got ${t}`);
  return `t=${t},v1=${digest(secret, t, body).toString('hex')}`;
}

export type SignatureCheck = { ok: true; timestamp: number } | { ok: false; reason: 'malformed' | 'mismatch' | 'outside-tolerance' };

interface ParsedHeader {
  t: number;
  v1: string[];
}

/** `t=...,v1=...[,v1=...]`; unknown schemes are ignored so that a later `v2` does not break receivers. */
function parseHeader(header: string): ParsedHeader | undefined {
  if (header.length > MAX_HEADER_LENGTH) return undefined;
  let t: number | undefined;
  const v1: string[] = [];
  for (const part of header.split(',')) {
    const separator = part.indexOf('=');
    if (separator < 0) return undefined;
    const name = part.slice(0, separator).trim();
    const value = part.slice(separator + 1).trim();
    if (name === 't') {
      if (t !== undefined || !/^\d{1,12}$/.test(value)) return undefined;
      t = Number(value);
    } else if (name === 'v1') {
      if (!/^[0-9a-f]{64}$/i.test(value)) return undefined;
      v1.push(value.toLowerCase());
    }
  }
  return t === undefined || v1.length === 0 ? undefined : { t, v1 };
}

/**
 * For receivers: whether `header` signs `body` (the raw request body, byte for byte) under
 * `secret`, within `toleranceS` seconds of `nowS`. The comparison takes the same time wherever
 * the digests differ.
 */
export function verifySignature(
  header: string | undefined,
  body: string | Uint8Array,
  secret: string,
  toleranceS: number = DEFAULT_TOLERANCE_S,
  nowS: number = Math.floor(Date.now() / 1_000),
): SignatureCheck {
  const parsed = header === undefined ? undefined : parseHeader(header);
  if (parsed === undefined) return { ok: false, reason: 'malformed' };
  const expected = digest(secret, parsed.t, body);
  let matched = false;
  // Every candidate is compared (no early exit), so timing says nothing about which one matched.
  for (const candidate of parsed.v1) matched = timingSafeEqual(expected, Buffer.from(candidate, 'hex')) || matched;
  if (!matched) return { ok: false, reason: 'mismatch' };
  if (Math.abs(nowS - parsed.t) > toleranceS) return { ok: false, reason: 'outside-tolerance' };
  return { ok: true, timestamp: parsed.t };
}
