/**
 * The signature scheme as receivers see it: a known answer computed by another implementation
 * (`openssl dgst -sha256 -hmac`), the round trip for any body, and every way a forged, altered,
 * replayed or malformed header is refused.
 */
import fc from 'fast-check';
import { unicodeText } from '@svc/testkit/properties';
import { describe, expect, it } from 'vitest';
import { generateWebhookSecret, signatureHeader, verifySignature, WEBHOOK_SECRET_PATTERN } from '@svc/webhooks';

const SECRET = 'whsec_0123456789abcdefghijABCDEFGHIJ0123456789';
const BODY = '{"id":"lst_1","event":"list.completed"}';
const T = 1_700_000_000;

describe('signatureHeader', () => {
  it('matches an independent HMAC-SHA256 of "<t>.<body>" (openssl)', () => {
    // printf '%s' '1700000000.{"id":"lst_1","event":"list.completed"}' | openssl dgst -sha256 -hmac "$SECRET"
    expect(signatureHeader(SECRET, BODY, T)).toBe('t=1700000000,v1=6525ad003473597d39235a4c4dcfc42957eefa46df9113ea6e948bdac663474b');
  });

  it('refuses a timestamp that is not whole unix seconds', () => {
    expect(() => signatureHeader(SECRET, BODY, 1.5)).toThrow(RangeError);
    expect(() => signatureHeader(SECRET, BODY, -1)).toThrow(RangeError);
  });
});

describe('verifySignature', () => {
  const header = signatureHeader(SECRET, BODY, T);

  it('accepts the header for the exact body within the tolerance, as a string or as raw bytes', () => {
    expect(verifySignature(header, BODY, SECRET, 300, T + 299)).toEqual({ ok: true, timestamp: T });
    expect(verifySignature(header, Buffer.from(BODY), SECRET, 300, T - 300)).toEqual({ ok: true, timestamp: T });
  });

  it('refuses another secret, another body, or a timestamp changed after signing', () => {
    expect(verifySignature(header, BODY, generateWebhookSecret(), 300, T)).toEqual({ ok: false, reason: 'mismatch' });
    expect(verifySignature(header, `${BODY} `, SECRET, 300, T)).toEqual({ ok: false, reason: 'mismatch' });
    expect(verifySignature(header.replace(`t=${T}`, `t=${T + 1}`), BODY, SECRET, 300, T)).toEqual({ ok: false, reason: 'mismatch' });
  });

  it('refuses a replay outside the tolerance, either way', () => {
    expect(verifySignature(header, BODY, SECRET, 300, T + 301)).toEqual({ ok: false, reason: 'outside-tolerance' });
    expect(verifySignature(header, BODY, SECRET, 300, T - 301)).toEqual({ ok: false, reason: 'outside-tolerance' });
  });

  it('refuses malformed headers', () => {
    const digest = header.split('v1=')[1]!;
    for (const bad of [
      undefined,
      '',
      `v1=${digest}`,
      `t=${T}`,
      `t=abc,v1=${digest}`,
      `t=${T},t=${T},v1=${digest}`,
      `t=${T},v1=${digest.slice(2)}`,
      `t=${T},v1=${digest}zz`,
      `t=${T};v1=${digest}`,
      `t=${T},v1=${digest},${'x'.repeat(3_000)}=1`,
    ])
      expect(verifySignature(bad, BODY, SECRET, 300, T)).toEqual({ ok: false, reason: 'malformed' });
  });

  it('accepts when any of several v1 digests matches and ignores unknown schemes', () => {
    const other = signatureHeader(generateWebhookSecret(), BODY, T).split(',')[1]!;
    expect(verifySignature(`${header},${other},v2=whatever`, BODY, SECRET, 300, T).ok).toBe(true);
    expect(verifySignature(`t=${T},${other}`, BODY, SECRET, 300, T).ok).toBe(false);
  });

  it('round-trips any body and refuses it with any byte changed', () => {
    fc.assert(
      fc.property(unicodeText({ maxLength: 500 }), fc.nat(), (body, position) => {
        const signed = signatureHeader(SECRET, body, T);
        expect(verifySignature(signed, body, SECRET, 0, T).ok).toBe(true);
        const bytes = Buffer.from(body, 'utf8');
        if (bytes.length === 0) return;
        const index = position % bytes.length;
        bytes.writeUInt8(bytes.readUInt8(index) ^ 0x01, index);
        expect(verifySignature(signed, bytes, SECRET, 0, T)).toEqual({ ok: false, reason: 'mismatch' });
      }),
    );
  });
});

describe('generateWebhookSecret', () => {
  it('is whsec_ and 40 base62 characters, different each time', () => {
    const secrets = new Set(Array.from({ length: 100 }, generateWebhookSecret));
    expect(secrets.size).toBe(100);
    for (const secret of secrets) expect(secret).toMatch(WEBHOOK_SECRET_PATTERN);
  });
});
