/**
 * API keys: `sk_` + 32 base62 characters. Only a SHA-256 digest is ever stored; the digest also
 * gives the key's public id (its first 16 hex digits), which meters and rate limits use so that
 * no key reaches Redis or a log line.
 */
import { hash, randomInt, timingSafeEqual } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export function generateApiKey(): string {
  let body = '';
  for (let i = 0; i < 32; i += 1) body += BASE62[randomInt(62)];
  return `sk_${body}`;
}

// One-shot `hash` (no Hash object per call): every authenticated request pays it.
export const hashApiKey = (key: string): string => hash('sha256', key, 'hex');

export const keyIdOf = (hash: string): string => hash.slice(0, 16);

/** Compares two hex digests without leaking where they differ (as text: same outcome, no hex decoding). */
export function digestsEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'latin1');
  const right = Buffer.from(b, 'latin1');
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * RFC 6750 b64token after the scheme `Bearer`, whose name is case-insensitive (RFC 9110 §11.1),
 * then one or more spaces; anything else is a malformed credential.
 */
const BEARER = /^bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

export type PresentedCredential = { kind: 'missing' } | { kind: 'malformed' } | { kind: 'token'; token: string };

/**
 * `allowBasic`: the key may also come as the password of HTTP Basic authentication (the user name
 * is ignored), for the feedback webhooks: sending services put credentials in a webhook URL
 * (`https://any:<key>@host/...`), never a Bearer header.
 */
export function parseAuthorization(header: string | undefined, allowBasic = false): PresentedCredential {
  if (header === undefined || header === '') return { kind: 'missing' };
  if (allowBasic && /^basic /i.test(header)) {
    const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const password = colon < 0 ? '' : decoded.slice(colon + 1);
    return password === '' || password.length > 256 ? { kind: 'malformed' } : { kind: 'token', token: password };
  }
  const match = BEARER.exec(header);
  return match?.[1] === undefined || match[1].length > 256 ? { kind: 'malformed' } : { kind: 'token', token: match[1] };
}
