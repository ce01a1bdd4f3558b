/**
 * The callback URL check at list creation and the address rule behind the SSRF guard: every
 * spelling of a local address is refused unless private callbacks are allowed.
 */
import { describe, expect, it } from 'vitest';
import { checkCallbackUrl, isPublicAddress } from '@svc/webhooks';

const accepted = (url: string, allowPrivate = false) => checkCallbackUrl(url, allowPrivate).ok;

describe('checkCallbackUrl', () => {
  it('accepts https URLs on public names and addresses, with ports, paths and queries', () => {
    for (const url of [
      'https://hooks.example.com/lists',
      'https://hooks.example.com:8443/a/b?token=abc#frag',
      'https://93.184.215.14/callback',
      'https://[2606:4700:4700::1111]/cb',
    ])
      expect(accepted(url), url).toBe(true);
  });

  it('refuses plain http, other schemes, credentials, relative and over-long URLs', () => {
    expect(checkCallbackUrl('http://hooks.example.com/', false)).toEqual({ ok: false, message: 'callbackUrl must use https://.' });
    for (const url of ['ftp://hooks.example.com/', 'file:///etc/passwd', 'javascript:alert(1)', 'gopher://x/'])
      expect(accepted(url), url).toBe(false);
    expect(checkCallbackUrl('https://user:pass@hooks.example.com/', false)).toEqual({
      ok: false,
      message: 'callbackUrl must not carry credentials.',
    });
    expect(accepted('https://user@hooks.example.com/')).toBe(false);
    expect(accepted('/relative/path')).toBe(false);
    expect(accepted('not a url')).toBe(false);
    const long = `https://hooks.example.com/${'a'.repeat(2_048)}`;
    expect(checkCallbackUrl(long, true)).toEqual({ ok: false, message: 'callbackUrl is longer than 2048 characters.' });
  });

  it('refuses every spelling of a loopback, private, link-local, unique-local or multicast host', () => {
    for (const url of [
      'https://127.0.0.1/',
      'https://127.1/',
      'https://2130706433/',
      'https://0x7f.0.0.1/',
      'https://0177.0.0.1/',
      'https://0.0.0.0/',
      'https://10.1.2.3/',
      'https://172.16.0.1/',
      'https://192.168.1.1/',
      'https://169.254.169.254/latest/meta-data/',
      'https://100.64.0.1/',
      'https://224.0.0.1/',
      'https://255.255.255.255/',
      'https://[::1]/',
      'https://[::]/',
      'https://[::ffff:127.0.0.1]/',
      'https://[::ffff:a00:1]/',
      'https://[fe80::1]/',
      'https://[fd00::1]/',
      'https://[ff02::1]/',
      'https://[2002:7f00:1::]/',
      'https://[64:ff9b::a00:1]/',
      'https://[::127.0.0.1]/',
      'https://[::10.0.0.1]/',
      'https://[::7f00:1]/',
      'https://[::8.8.8.8]/',
      'https://[100::1]/',
      'https://[fec0::1]/',
      'https://[2001:db8::1]/',
      'https://localhost/',
      'https://LOCALHOST./',
      'https://api.localhost/',
    ])
      expect(checkCallbackUrl(url, false), url).toEqual({
        ok: false,
        message: 'callbackUrl must point to a public address (not loopback, private or link-local).',
      });
  });

  it('with private callbacks allowed: http and local hosts pass, credentials and other schemes still do not', () => {
    expect(accepted('http://127.0.0.1:8080/cb', true)).toBe(true);
    expect(accepted('https://localhost/cb', true)).toBe(true);
    expect(accepted('http://10.0.0.5/cb', true)).toBe(true);
    expect(accepted('http://u:p@127.0.0.1/cb', true)).toBe(false);
    expect(accepted('ftp://127.0.0.1/cb', true)).toBe(false);
  });
});

describe('isPublicAddress', () => {
  it('is true only for public unicast addresses', () => {
    expect(isPublicAddress('93.184.215.14')).toBe(true);
    expect(isPublicAddress('2606:4700:4700::1111')).toBe(true);
    expect(isPublicAddress('::ffff:93.184.215.14')).toBe(true);
    for (const address of ['127.0.0.1', '10.0.0.1', '::1', '::ffff:10.0.0.1', 'fe80::1%eth0', 'fc00::1', 'not-an-ip', '', '1.2.3'])
      expect(isPublicAddress(address), address).toBe(false);
  });

  it('refuses IPv4-compatible addresses (::/96) in every spelling, and IPv6 outside global unicast (2000::/3)', () => {
    for (const address of [
      '::127.0.0.1',
      '::7f00:1',
      '::10.0.0.1',
      '::a00:1',
      '::8.8.8.8',
      '0:0:0:0:0:0:7f00:1',
      '::ffff:0:a00:1',
      '100::1',
      '5f00::1',
      'fec0::1',
      '3fff::1',
      '4000::1',
      '2001:db8::1',
      '2001:2::1',
    ])
      expect(isPublicAddress(address), address).toBe(false);
    expect(isPublicAddress('2a00:1450:4001:80b::200e')).toBe(true);
    expect(isPublicAddress('::ffff:8.8.8.8')).toBe(true);
  });
});
