import { describe, expect, it } from 'vitest';
import { parseAddress } from '../../src/checks/index.ts';
import { needsSmtpUtf8 } from '../../src/smtp/guard.ts';

const kind = (input: string) => {
  const parsed = parseAddress(input);
  return parsed.ok ? 'ok' : parsed.kind;
};

describe('parseAddress', () => {
  it('accepts dot-atoms, sub-addressing and every atext character, lower-casing the domain', () => {
    expect(parseAddress('  Alice.Smith+news@Example.COM ')).toMatchObject({
      ok: true,
      local: 'Alice.Smith+news',
      domain: 'example.com',
      address: 'Alice.Smith+news@example.com',
    });
    expect(kind("a!#$%&'*+/=?^_`{|}~-z@sub.example.co.uk")).toBe('ok');
  });

  it('converts IDN domains to A-labels: only a non-ASCII local part leaves the SMTP form needing SMTPUTF8', () => {
    const jorg = parseAddress('jörg@bücher.example');
    expect(jorg).toMatchObject({
      ok: true,
      domain: 'xn--bcher-kva.example',
      unicodeDomain: 'bücher.example',
      address: 'jörg@xn--bcher-kva.example',
    });
    const ann = parseAddress('ann@例え.jp');
    expect(ann).toMatchObject({ ok: true, domain: 'xn--r8jz45g.jp', address: 'ann@xn--r8jz45g.jp' });
    const ascii = parseAddress('Alice.Smith+news@Example.COM');
    expect([jorg, ann, ascii].map((parsed) => parsed.ok && needsSmtpUtf8(parsed.address))).toEqual([true, false, false]);
  });

  it.each([
    ['', 'empty'],
    ['   ', 'empty'],
    ['plainaddress', 'no_at'],
    ['@example.com', 'local_invalid'],
    ['.a@example.com', 'local_invalid'],
    ['a.@example.com', 'local_invalid'],
    ['a..b@example.com', 'local_invalid'],
    ['"a b"@example.com', 'forbidden_char'],
    ['"ab"@example.com', 'local_invalid'],
    ['a(b)@example.com', 'local_invalid'],
    ['a@b@example.com', 'local_invalid'],
    ['a@', 'domain_invalid'],
    ['a@localhost', 'domain_invalid'],
    ['a@-x.com', 'domain_invalid'],
    ['a@x-.com', 'domain_invalid'],
    ['a@x..com', 'domain_invalid'],
    ['a@example.com.', 'domain_invalid'],
    ['a@1.2.3.4', 'domain_invalid'],
    ['a@[1.2.3.4]', 'domain_invalid'],
    ['a@ex_ample.com', 'domain_invalid'],
    [`${'l'.repeat(65)}@example.com`, 'too_long'],
    [`a@${'d'.repeat(64)}.com`, 'domain_invalid'],
    [`${'l'.repeat(64)}@${'d'.repeat(63)}.${'d'.repeat(63)}.${'d'.repeat(60)}.com`, 'too_long'],
    ['x'.repeat(1_001), 'too_long'],
  ])('%j → %s', (input, expected) => expect(kind(input)).toBe(expected));

  it.each([
    'a@b.com\r\nRCPT TO:<x@y.com>',
    'a@b.com\nDATA',
    'a@b.com>',
    '<a@b.com',
    'a@b.com\u0000',
    'a b@b.com',
    'a@b.com RCPT',
    'a\t@b.com',
    'a@b.com\u2028x',
  ])('refuses anything that could inject an SMTP command: %j', (input) => {
    const parsed = parseAddress(input);
    expect(parsed.ok).toBe(false);
  });
});

describe('any string at all is an input', () => {
  it.each([
    ['a lone high surrogate', '\ud800@b.com'],
    ['a lone low surrogate in the domain', 'ann@b\udc00.com'],
    ['a right-to-left override', 'ann\u202e@b.com'],
    ['a right-to-left mark', 'ann@b.com\u200f'],
    ['a left-to-right isolate', '\u2066ann@b.com'],
    ['an Arabic letter mark', 'ann\u061c@b.com'],
    ['a zero-width joiner', 'an\u200dn@b.com'],
    ['a soft hyphen', 'an\u00adn@b.com'],
    ['a BOM', '\ufeffann@b.com'],
    ['NUL', 'ann\u0000@b.com'],
    ['a C1 control', 'ann\u0085@b.com'],
    ['a private-use character', 'ann\ue000@b.com'],
    ['a no-break space', 'ann\u00a0@b.com'],
    ['an ideographic space', 'ann\u3000@b.com'],
  ])('%s is invalid syntax, never an exception', (_name, input) => {
    expect(kind(input)).toBe('forbidden_char');
  });

  it('keeps accepting non-ASCII letters of any script', () => {
    expect(kind('用户@例え.jp')).toBe('ok');
    expect(kind('ñandú@correo.es')).toBe('ok');
    expect(kind('δοκιμή@παράδειγμα.δοκιμή')).toBe('ok');
  });
});
