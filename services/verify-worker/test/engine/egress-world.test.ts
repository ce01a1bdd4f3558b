/**
 * The verifier that knows when it cannot reach port 25, and routes around an egress a provider
 * refuses: a canary port where nothing listens (port 25 blocked, the default of most clouds),
 * the default canaries (the DNS canaries' MX hosts), and two SOCKS5 egresses bound to their own
 * loopback addresses in front of mail servers of which one refuses the first egress by address.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@svc/config';
import { createLogger } from '@svc/telemetry';
import { Registry } from 'prom-client';
import {
  findFreePort,
  startDnsServer,
  startSmtpServer,
  startPortCanary,
  startSocksServer,
  type RigDnsServer,
  type RigSmtpServer,
  type RigSocksServer,
  type Zone,
} from '@svc/testkit';
import { createVerifier } from '../../src/handler.ts';
import { FAST_TUNING, mailDomain, verdicts } from './world.ts';

const signal = new AbortController().signal;
const options = () => ({ deadlineAt: Date.now() + 10_000, signal });

/** Log lines as JSON objects, for the one line each change of state deserves. */
function capture(lines: string[]) {
  return createLogger(
    'info',
    'verify-test',
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        const parsed: unknown = JSON.parse(chunk.toString());
        if (typeof parsed === 'object' && parsed !== null && 'msg' in parsed) lines.push(String(parsed.msg));
        done();
      },
    }),
  );
}

async function metric(registry: Registry, name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
  const values = (await registry.getSingleMetric(name)?.get())?.values ?? [];
  return values.find((value) => Object.entries(labels).every(([key, wanted]) => value.labels[key] === wanted))?.value;
}

describe('port 25 blocked: no canary mail server accepts a connection', () => {
  const ZONE: Zone = { ...mailDomain('port.test', '127.0.0.151') };
  let dns: RigDnsServer;
  let smtp: RigSmtpServer;
  let port: number;
  let closedPort: number;
  beforeAll(async () => {
    dns = await startDnsServer(ZONE);
    port = await findFreePort(['127.0.0.151']);
    closedPort = await findFreePort(['127.0.0.1']);
    smtp = await startSmtpServer({ host: '127.0.0.151', port, users: ['ann@port.test'] });
  });
  afterAll(async () => {
    await dns.close();
    await smtp.close();
  });

  const verifier = (env: Record<string, string>, registry?: Registry, lines?: string[]) =>
    createVerifier({
      config: loadConfig({
        ...dns.canaryEnv,
        VERIFY_SMTP_PORT: String(port),
        VERIFY_ALLOW_PRIVATE_MX: 'true',
        VERIFY_CONNECT_TIMEOUT_MS: '300',
        VERIFY_COMMAND_TIMEOUT_MS: '1000',
        VERIFY_BATCH_DEADLINE_MS: '5000',
        // The server's script changes between batches: each batch on its own connection.
        VERIFY_SMTP_SESSION_IDLE_MS: '0',
        ...env,
      }),
      tuning: FAST_TUNING,
      ...(registry === undefined ? {} : { registry }),
      ...(lines === undefined ? {} : { logger: capture(lines) }),
    });

  it('what SMTP would decide is risky/smtp_unavailable, without a connection; DNS verdicts stand; the operator is told to set VERIFY_SOCKS_PROXY', async () => {
    const registry = new Registry();
    const lines: string[] = [];
    const blocked = verifier({ VERIFY_SMTP_CANARIES: `127.0.0.1:${closedPort}` }, registry, lines);
    const results = await blocked.verify(['ann@port.test', 'bob@port.test', 'carl@gone.test'], options());
    expect(verdicts(results)).toEqual({
      'ann@port.test': 'risky/smtp_unavailable',
      'bob@port.test': 'risky/smtp_unavailable',
      'carl@gone.test': 'undeliverable/invalid_domain',
    });
    expect(results[0]?.checks).toMatchObject({ domainExists: true, mx: ['mx.port.test'], smtp: null, catchAll: null });
    expect(smtp.connections).toBe(0);
    expect(await metric(registry, 'verify_egress_open')).toBe(0);
    await blocked.verify(['ann@port.test'], options());
    const told = lines.filter((line) => line.startsWith('SMTP egress closed'));
    expect(told).toHaveLength(1);
    expect(told[0]).toContain('VERIFY_SOCKS_PROXY');
  });

  it('with the canary reachable the same addresses are decided by their server', async () => {
    const results = await verifier({}).verify(['ann@port.test', 'bob@port.test'], options());
    expect(verdicts(results)).toEqual({ 'ann@port.test': 'deliverable/accepted_email', 'bob@port.test': 'undeliverable/rejected_email' });
  });

  it('port 25 closing while the product runs is noticed by the first batch that reaches no mail server', async () => {
    const canary = await startPortCanary();
    const registry = new Registry();
    const watched = verifier({ VERIFY_SMTP_CANARIES: canary.address, VERIFY_RESULT_CACHE_TTL_S: '0' }, registry);
    expect(verdicts(await watched.verify(['ann@port.test'], options()))).toEqual({ 'ann@port.test': 'deliverable/accepted_email' });
    // The way out closes: the canary and the mail server alike stop answering.
    await canary.close();
    smtp.script = { ...smtp.script, refuse: 'reset' };
    try {
      expect(verdicts(await watched.verify(['ann@port.test'], options()))).toEqual({ 'ann@port.test': 'risky/smtp_unavailable' });
      expect(await metric(registry, 'verify_egress_open')).toBe(0);
    } finally {
      smtp.script = { ...smtp.script, refuse: undefined };
    }
  });

  it('unset, the SMTP canaries are the MX hosts of the DNS canaries', async () => {
    const { VERIFY_SMTP_CANARIES: _set, ...unset } = dns.canaryEnv;
    ZONE['mx.canary.rig.test'] = { A: ['127.0.0.151'] };
    const before = smtp.connections;
    const registry = new Registry();
    const results = await createVerifier({
      config: loadConfig({ ...unset, VERIFY_SMTP_PORT: String(port), VERIFY_ALLOW_PRIVATE_MX: 'true', VERIFY_CONNECT_TIMEOUT_MS: '300' }),
      tuning: FAST_TUNING,
      registry,
    }).verify(['ann@port.test'], options());
    expect(verdicts(results)).toEqual({ 'ann@port.test': 'deliverable/accepted_email' });
    expect(await metric(registry, 'verify_egress_open')).toBe(1);
    // The canary's connection and the probe's session.
    expect(smtp.connections - before).toBe(2);
  });
});

describe('an egress pool with one egress refused by address', () => {
  // Two domains hosted by one provider (Microsoft 365, by their MX names) on two servers; the
  // first refuses clients from 127.0.0.161, as a server does whose blocklist lists that address.
  const ZONE: Zone = {
    'pool.test': { MX: [[10, 'pool-test.mail.protection.outlook.com']] },
    'pool-test.mail.protection.outlook.com': { A: ['127.0.0.163'] },
    'other.test': { MX: [[10, 'other-test.mail.protection.outlook.com']] },
    'other-test.mail.protection.outlook.com': { A: ['127.0.0.164'] },
  };
  let dns: RigDnsServer;
  let port: number;
  const servers: RigSmtpServer[] = [];
  const proxies: RigSocksServer[] = [];
  beforeAll(async () => {
    dns = await startDnsServer(ZONE);
    port = await findFreePort(['127.0.0.163', '127.0.0.164']);
    servers.push(
      await startSmtpServer({ host: '127.0.0.163', port, users: ['ann@pool.test'], refuseFrom: { addresses: ['127.0.0.161'] } }),
    );
    servers.push(await startSmtpServer({ host: '127.0.0.164', port, users: ['ann@other.test'] }));
    proxies.push(await startSocksServer('127.0.0.161'), await startSocksServer('127.0.0.162'));
  });
  afterAll(async () => {
    await dns.close();
    await Promise.all([...servers, ...proxies].map((server) => server.close()));
  });

  const verifier = (socks: string, registry?: Registry) =>
    createVerifier({
      config: loadConfig({
        ...dns.canaryEnv,
        VERIFY_SOCKS_PROXY: socks,
        VERIFY_RESULT_CACHE_TTL_S: '0',
        // Eight Microsoft sessions in a few seconds: above the default budget (5 a minute), which is not what this tests.
        VERIFY_PROVIDER_BUDGETS: '{"microsoft":{"sessionsPerMinute":60}}',
        VERIFY_SMTP_PORT: String(port),
        VERIFY_ALLOW_PRIVATE_MX: 'true',
        VERIFY_CONNECT_TIMEOUT_MS: '1000',
        VERIFY_COMMAND_TIMEOUT_MS: '1000',
        VERIFY_BATCH_DEADLINE_MS: '5000',
        VERIFY_SMTP_SESSION_IDLE_MS: '0',
      }),
      tuning: FAST_TUNING,
      ...(registry === undefined ? {} : { registry }),
    });

  it('with the refused egress alone nothing changes: risky/smtp_blocked', async () => {
    const results = await verifier(proxies[0]!.url).verify(['ann@pool.test', 'bob@pool.test'], options());
    expect(verdicts(results)).toEqual({ 'ann@pool.test': 'risky/smtp_blocked', 'bob@pool.test': 'risky/smtp_blocked' });
    expect(results[0]?.checks.provider).toBe('microsoft');
  });

  it('with two, the refused one is set aside for the provider and the domain is tried again through the other', async () => {
    const registry = new Registry();
    const pool = verifier(`${proxies[0]!.url},${proxies[1]!.url}`, registry);
    const [first, second] = proxies.map((proxy) => proxy.url.slice('socks5://'.length));
    for (let batch = 0; batch < 4; batch++) {
      const results = await pool.verify(['ann@pool.test', 'bob@pool.test', 'ann@other.test'], options());
      expect(verdicts(results)).toEqual({
        'ann@pool.test': 'deliverable/accepted_email',
        'bob@pool.test': 'undeliverable/rejected_email',
        'ann@other.test': 'deliverable/accepted_email',
      });
    }
    // Refused once, then set aside for Microsoft: no later session of that provider went through it.
    expect(await metric(registry, 'verify_egress_blocks_total', { egress: first!, provider: 'microsoft' })).toBe(1);
    expect(await metric(registry, 'verify_egress_set_aside', { egress: first! })).toBe(1);
    expect(await metric(registry, 'verify_egress_set_aside', { egress: second! })).toBe(0);
    expect(await metric(registry, 'verify_egress_sessions_total', { egress: first!, provider: 'microsoft' })).toBe(1);
    expect(await metric(registry, 'verify_egress_sessions_total', { egress: second!, provider: 'microsoft' })).toBe(8);
    expect(await metric(registry, 'verify_egress_reachable', { egress: first! })).toBe(1);
  });
});
