/**
 * DNS answers kept as their zones ask (RFC 2308), end to end with the outcome cache on: a name
 * whose NXDOMAIN carries a short SOA minimum and then gains its records is seen as soon as the
 * zone allows, not a day later; and `checks.provider` for one domain per MX naming pattern.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@svc/config';
import { findFreePort, startDnsServer, startSmtpServer, type RigDnsServer, type RigSmtpServer, type Zone } from '@svc/testkit';
import { DnsResolver } from '../../src/dns/resolver.ts';
import { createVerifier } from '../../src/handler.ts';
import { FAST_TUNING, verdicts } from './world.ts';

const signal = new AbortController().signal;
const options = () => ({ deadlineAt: Date.now() + 10_000, signal });

const PROVIDERS: Record<string, string | null> = {
  'aspmx.l.google.com': 'google',
  'example-com.mail.protection.outlook.com': 'microsoft',
  'mta5.am0.yahoodns.net': 'yahoo',
  'mx-aol.mail.gm0.yahoodns.net': 'yahoo',
  'mx01.mail.icloud.com': 'apple',
  'mx.zoho.eu': 'zoho',
  'mail.protonmail.ch': 'proton',
  'mx.yandex.net': 'yandex',
  'mxs.mail.ru': 'mailru',
  'mx00.gmx.net': 'gmx',
  'mx-ha03.web.de': 'gmx',
  'in1-smtp.messagingengine.com': 'fastmail',
  'mx0a-00123456.pphosted.com': 'proofpoint',
  'eu-smtp-inbound-1.mimecast.com': 'mimecast',
  'd123.ess.barracudanetworks.com': 'barracuda',
  'mx1.hc1234-56.iphmx.com': 'cisco',
  'mx.own-server.test': null,
};
const domainOf = (host: string) => `d-${host.replaceAll('.', '-')}.test`;

const ZONE: Zone = {
  // A zone apex with a short negative TTL: its NXDOMAIN answers say "ask again in 1 s".
  'soa.test': { SOA: { minimum: 1 }, MX: [[10, 'mx.soa.test']] },
  'mx.soa.test': { A: ['127.0.0.152'] },
  // A zone that asks for a day of negative caching: kept 15 minutes at most.
  'long.test': { SOA: { minimum: 86_400, ttl: 86_400 } },
  'implicit.test': { A: ['127.0.0.152'] },
  ...Object.fromEntries(
    Object.keys(PROVIDERS).flatMap((host) => [
      [domainOf(host), { MX: [[10, host]] }],
      [host, { A: ['127.0.0.152'] }],
    ]),
  ),
};

describe('negative answers kept by the SOA minimum, in the DNS cache and the outcome cache', () => {
  let dns: RigDnsServer;
  let smtp: RigSmtpServer;
  let port: number;
  beforeAll(async () => {
    dns = await startDnsServer(ZONE);
    port = await findFreePort(['127.0.0.152']);
    smtp = await startSmtpServer({ host: '127.0.0.152', port, catchAll: false, users: ['ann@new.soa.test', 'ann@implicit.test'] });
  });
  afterAll(async () => {
    await dns.close();
    await smtp.close();
  });

  // The clock the verifier's DNS answers and caches age by: the test moves it past the SOA minimum.
  let skewMs = 0;
  const now = () => Date.now() + skewMs;
  const verifier = () =>
    createVerifier({
      now,
      config: loadConfig({
        ...dns.canaryEnv,
        VERIFY_SMTP_PORT: String(port),
        VERIFY_ALLOW_PRIVATE_MX: 'true',
        VERIFY_CONNECT_TIMEOUT_MS: '500',
        VERIFY_BATCH_DEADLINE_MS: '5000',
        VERIFY_RESULT_CACHE_TTL_S: '86400',
        VERIFY_DOMAIN_CACHE_TTL_S: '86400',
      }),
      tuning: FAST_TUNING,
    });

  it('a name that gains its records is deliverable once the SOA minimum has passed (it was invalid_domain for a day)', async () => {
    const cached = verifier();
    const asked = () => dns.queries.filter((query) => query.name === 'new.soa.test' && query.type === 'MX').length;
    expect(verdicts(await cached.verify(['ann@new.soa.test'], options()))).toEqual({ 'ann@new.soa.test': 'undeliverable/invalid_domain' });
    ZONE['new.soa.test'] = { MX: [[10, 'mx.soa.test']] };
    // Within the minimum: the cached answer stands, and the resolver is not asked again.
    const before = asked();
    expect(verdicts(await cached.verify(['ann@new.soa.test'], options()))).toEqual({ 'ann@new.soa.test': 'undeliverable/invalid_domain' });
    expect(asked()).toBe(before);
    skewMs += 1_100;
    expect(verdicts(await cached.verify(['ann@new.soa.test'], options()))).toEqual({ 'ann@new.soa.test': 'deliverable/accepted_email' });
    expect(asked()).toBe(before + 1);
  });

  it('a day of negative TTL is kept 15 minutes at most', async () => {
    const resolver = new DnsResolver({ servers: [dns.address], timeoutMs: 500, mxCacheSeconds: 86_400 });
    expect(await resolver.lookupMailHosts('gone.long.test')).toEqual({ kind: 'nxdomain' });
    expect(resolver.keepSeconds('gone.long.test')).toBeGreaterThanOrEqual(899);
    expect(resolver.keepSeconds('gone.long.test')).toBeLessThanOrEqual(900);
    expect(await resolver.lookupMailHosts('soa.test')).toMatchObject({ kind: 'mx' });
    // Positive answers for their TTL (the rig's 300 s).
    expect(resolver.keepSeconds('soa.test')).toBeGreaterThanOrEqual(299);
    expect(resolver.keepSeconds('soa.test')).toBeLessThanOrEqual(300);
  });
});

describe('checks.provider, one domain per MX naming pattern', () => {
  let dns: RigDnsServer;
  let smtp: RigSmtpServer;
  let port: number;
  beforeAll(async () => {
    dns = await startDnsServer(ZONE);
    port = await findFreePort(['127.0.0.153']);
    smtp = await startSmtpServer({ host: '127.0.0.153', port, catchAll: true });
  });
  afterAll(async () => {
    await dns.close();
    await smtp.close();
  });

  it('names the provider or mail gateway behind the MX hosts; null when unknown, for an implicit MX, or with no MX', async () => {
    const emails = [...Object.keys(PROVIDERS).map((host) => `ann@${domainOf(host)}`), 'ann@implicit.test', 'ann@gone.test'];
    const results = await createVerifier({
      config: loadConfig({
        ...dns.canaryEnv,
        VERIFY_SMTP_PORT: String(port),
        VERIFY_ALLOW_PRIVATE_MX: 'true',
        VERIFY_RESULT_CACHE_TTL_S: '0',
      }),
      tuning: FAST_TUNING,
    }).verify(emails, options());
    expect(Object.fromEntries(results.map((result) => [result.email, result.checks.provider]))).toEqual({
      ...Object.fromEntries(Object.entries(PROVIDERS).map(([host, provider]) => [`ann@${domainOf(host)}`, provider])),
      'ann@implicit.test': null,
      'ann@gone.test': null,
    });
  });
});
