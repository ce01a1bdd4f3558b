/** The `host[:port]` forms the configuration gives resolvers and SMTP canaries. */
import { describe, expect, it } from 'vitest';
import { parseDnsServer } from '../../src/dns/query.ts';
import { parseSmtpCanary } from '../../src/health/sight.ts';

describe('resolver and canary addresses', () => {
  it.each([
    ['127.0.0.1:5353', { host: '127.0.0.1', port: 5353 }],
    ['1.1.1.1', { host: '1.1.1.1', port: 53 }],
    ['[::1]:5353', { host: '::1', port: 5353 }],
    ['2001:db8::53', { host: '2001:db8::53', port: 53 }],
  ])('resolver %s', (value, expected) => {
    expect(parseDnsServer(value)).toEqual(expected);
  });

  it.each([
    ['gmail-smtp-in.l.google.com', { host: 'gmail-smtp-in.l.google.com', port: 25 }],
    ['127.0.0.1:2525', { host: '127.0.0.1', port: 2525 }],
    ['[2001:db8::25]', { host: '2001:db8::25', port: 25 }],
    ['[2001:db8::25]:587', { host: '2001:db8::25', port: 587 }],
  ])('SMTP canary %s, the port defaulting to VERIFY_SMTP_PORT', (value, expected) => {
    expect(parseSmtpCanary(value, 25)).toEqual(expected);
  });
});
