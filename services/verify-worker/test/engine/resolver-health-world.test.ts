/**
 * The verifier that knows when it cannot see its DNS: a resolver that lies (NXDOMAIN for every
 * name) and then recovers while the product runs, a silent one, a port where nothing listens.
 * Before: `john@` a real domain came back undeliverable/invalid_domain and was cached for a day.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@svc/config';
import { createLogger } from '@svc/telemetry';
import { Registry } from 'prom-client';
import { startDnsServer, startSmtpServer, findFreePort, waitUntil, type RigDnsServer, type RigSmtpServer, type Zone } from '@svc/testkit';
import { UNHEALTHY_CHECK_INTERVAL_MS } from '../../src/health/canary-rule.ts';
import { createVerifier, startVerifyProcess, type VerifyProcess } from '../../src/handler.ts';
import { FAST_TUNING, mailDomain, verdicts } from './world.ts';

const ZONE: Zone = { ...mailDomain('real.test', '127.0.0.150'), ...mailDomain('fresh.test', '127.0.0.150') };
const signal = new AbortController().signal;

describe('a resolver that lies, then recovers while the product runs', () => {
  let dns: RigDnsServer;
  let smtp: RigSmtpServer;
  let port: number;
  const lines: Array<{ level: number; msg: string }> = [];
  const registry = new Registry();
  beforeAll(async () => {
    dns = await startDnsServer(ZONE);
    port = await findFreePort(['127.0.0.150']);
    smtp = await startSmtpServer({ host: '127.0.0.150', port, users: ['ann@real.test', 'john@fresh.test'] });
  });
  afterAll(async () => {
    await dns.close();
    await smtp.close();
  });

  // One process: its verifiers share the sight (what the resolver taught, whether it is trusted)
  // and the metrics, each with an outcome cache of its own.
  let shared: VerifyProcess | undefined;
  const logger = createLogger(
    'info',
    'verify-test',
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        const parsed: unknown = JSON.parse(chunk.toString());
        if (typeof parsed === 'object' && parsed !== null && 'msg' in parsed && 'level' in parsed)
          lines.push({ level: Number(parsed.level), msg: String(parsed.msg) });
        done();
      },
    }),
  );
  afterAll(() => shared?.sight.stop());
  const verifier = () => {
    const config = loadConfig({
      ...dns.canaryEnv,
      VERIFY_SMTP_PORT: String(port),
      VERIFY_ALLOW_PRIVATE_MX: 'true',
      VERIFY_HELO_NAME: 'probe.rig.test',
      VERIFY_CONNECT_TIMEOUT_MS: '400',
      VERIFY_COMMAND_TIMEOUT_MS: '1000',
      VERIFY_BATCH_DEADLINE_MS: '5000',
    });
    shared ??= startVerifyProcess(config, { registry, logger });
    return createVerifier({ config, tuning: FAST_TUNING, process: shared });
  };
  const gauge = async () => (await registry.getSingleMetric('verify_resolver_trusted')?.get())?.values[0]?.value;

  it('trusts a resolver whose canaries resolve: a missing domain is invalid_domain', async () => {
    const results = await verifier().verify(['ann@real.test', 'bob@gone.test'], { deadlineAt: Date.now() + 10_000, signal });
    expect(verdicts(results)).toEqual({ 'ann@real.test': 'deliverable/accepted_email', 'bob@gone.test': 'undeliverable/invalid_domain' });
    expect(await gauge()).toBe(1);
  });

  it('a lying resolver is noticed by the first batch it lies to: nothing is declared dead, nothing cached, the operator told once', async () => {
    const cached = verifier(); // one verifier, one outcome cache across the lie and the recovery
    dns.behave('nxdomain');
    const started = Date.now();
    const detailed = await cached.verifyDetailed(['john@fresh.test', 'bob@gone.test', 'ann@real.test'], {
      deadlineAt: Date.now() + 10_000,
      signal,
    });
    const lying = detailed.map((outcome) => outcome.result);
    // Blind verdicts are worth another try (lists retry them); what the server decided is not.
    expect(detailed.map((outcome) => outcome.temporary)).toEqual([true, true, false]);
    const noticedInMs = Date.now() - started;
    // real.test's MX answer was learnt while the resolver was trusted, and is still believed.
    expect(verdicts(lying)).toEqual({
      'john@fresh.test': 'risky/dns_unavailable',
      'bob@gone.test': 'risky/dns_unavailable',
      'ann@real.test': 'deliverable/accepted_email',
    });
    expect(lying[0]?.checks).toMatchObject({ domainExists: null, mx: null, smtp: null, provider: null });
    expect(lying[0]?.score).toBe(40);
    expect(noticedInMs).toBeLessThan(2_000);
    expect(await gauge()).toBe(0);
    // Still lying: still blind, and one log line, not one per batch.
    await cached.verify(['carl@gone.test'], { deadlineAt: Date.now() + 10_000, signal });
    const untrusted = lines.filter((line) => line.msg.startsWith('DNS resolver untrusted'));
    expect(untrusted).toHaveLength(1);
    expect(untrusted[0]?.msg).toContain('VERIFY_DNS_SERVERS');
    expect(untrusted[0]?.level).toBe(50);

    dns.behave('normal');
    const recoveredAt = Date.now();
    const recovered = await cached.verify(['john@fresh.test', 'bob@gone.test'], { deadlineAt: Date.now() + 10_000, signal });
    expect(verdicts(recovered)).toEqual({
      'john@fresh.test': 'deliverable/accepted_email',
      'bob@gone.test': 'undeliverable/invalid_domain',
    });
    expect(Date.now() - recoveredAt).toBeLessThan(2_000);
    expect(await gauge()).toBe(1);
    expect(lines.filter((line) => line.msg.startsWith('DNS resolver trusted again'))).toHaveLength(1);
  });

  it('a recovered resolver is trusted again at the next check, within seconds, with no batch asking', async () => {
    verifier();
    dns.behave('nxdomain');
    await verifier().verify(['carl@gone.test'], { deadlineAt: Date.now() + 10_000, signal });
    expect(await gauge()).toBe(0);
    dns.behave('normal');
    const recoveredAt = Date.now();
    await waitUntil(async () => (await gauge()) === 1, 8_000, 'the recovered resolver trusted');
    expect(Date.now() - recoveredAt).toBeLessThanOrEqual(UNHEALTHY_CHECK_INTERVAL_MS + 1_000);
  });
});

describe('a resolver that answers nothing, and one where nothing listens', () => {
  let silent: RigDnsServer;
  beforeAll(async () => {
    silent = await startDnsServer(ZONE);
    silent.behave('silent');
  });
  afterAll(() => silent.close());

  const run = (servers: string) =>
    createVerifier({
      config: loadConfig({
        VERIFY_DNS_SERVERS: servers,
        VERIFY_DNS_CANARIES: 'canary.rig.test',
        VERIFY_SMTP_CANARIES: '127.0.0.1:9',
        VERIFY_ALLOW_PRIVATE_MX: 'true',
        VERIFY_CONNECT_TIMEOUT_MS: '300',
        VERIFY_BATCH_DEADLINE_MS: '5000',
      }),
      tuning: FAST_TUNING,
    }).verify(['ann@real.test', 'bob@gone.test'], { deadlineAt: Date.now() + 10_000, signal });

  it('silence is risky/dns_unavailable (was risky/timeout), and says DNS could not tell', async () => {
    const results = await run(silent.address);
    expect(verdicts(results)).toEqual({ 'ann@real.test': 'risky/dns_unavailable', 'bob@gone.test': 'risky/dns_unavailable' });
    expect(results[0]?.checks).toMatchObject({ domainExists: null, mx: null, smtp: null });
  });

  it('a resolver port where nothing listens is risky/dns_unavailable (was risky/unexpected_error)', async () => {
    const nothing = await findFreePort(['127.0.0.1']);
    const results = await run(`127.0.0.1:${nothing}`);
    expect(verdicts(results)).toEqual({ 'ann@real.test': 'risky/dns_unavailable', 'bob@gone.test': 'risky/dns_unavailable' });
  });
});
