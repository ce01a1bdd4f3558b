/**
 * The batch's contract at engine level: any string is a result, no entry fails the batch, a
 * check not made is null, the outcome cache holds no address, and the control's place.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '@svc/config';
import { verifyResultSchema, type VerifyResult } from '@svc/contracts';
import { controlAddress } from '../../src/engine/control-address.ts';
import { DnsResolver } from '../../src/dns/resolver.ts';
import { HostLimiter } from '../../src/engine/host-limiter.ts';
import { Verifier } from '../../src/engine/verifier.ts';
import type { CachedOutcome } from '../../src/cache/cached-outcome.ts';
import { FAST_TUNING, mailDomain, useWorld, verdicts } from './world.ts';

const world = useWorld(
  {
    ...mailDomain('one.test', '127.0.0.120'),
    'two.test': { MX: [[10, 'mx.one.test']] },
    ...mailDomain('gmail.con', '127.0.0.121'),
  },
  {
    '127.0.0.120': { users: ['ann@one.test', 'bob@one.test', 'ann@two.test'] },
    '127.0.0.121': { users: ['ann.private@gmail.con'] },
  },
);

const HOSTILE = [
  '\ud800@b.com',
  'ann@\udfff.com',
  'ann\u202e@one.test',
  '\u200fann@one.test',
  'ann@one.test\u2066',
  'a\u0000nn@one.test',
  '\u0007',
  '',
  ' ',
  '@',
  'x'.repeat(5_000),
  '"quoted local"@one.test',
  'ann@[127.0.0.1]',
];

/** A verifier whose dependencies are real but whose cache and result hook the test holds. */
function verifierWith(overrides: { onResult?: (result: VerifyResult) => void; cache?: Map<string, CachedOutcome> }) {
  const config = loadConfig({
    VERIFY_DNS_SERVERS: world.dns.address,
    VERIFY_SMTP_PORT: String(world.port),
    VERIFY_HELO_NAME: 'probe.rig.test',
  });
  const resolver = new DnsResolver({ servers: config.VERIFY_DNS_SERVERS, timeoutMs: 1_000, mxCacheSeconds: 60 });
  const cache = overrides.cache;
  return new Verifier({
    lookupMailHosts: (domain) => resolver.lookupMailHosts(domain),
    batchDeadlineMs: 5_000,
    controlSeed: config.mailFrom,
    ...(cache === undefined
      ? {}
      : {
          cache: {
            get: (key: string) => Promise.resolve(cache.get(key)),
            set: (key: string, value: CachedOutcome) => Promise.resolve(void cache.set(key, value)),
          },
        }),
    ...(overrides.onResult === undefined ? {} : { onResult: overrides.onResult }),
    probe: {
      filterTargets: (addresses) => addresses,
      limiter: new HostLimiter(2),
      session: {
        port: world.port,
        heloName: 'probe.rig.test',
        mailFrom: config.mailFrom,
        connectTimeoutMs: 1_000,
        commandTimeoutMs: 1_000,
      },
      tuning: FAST_TUNING,
    },
  });
}
const options = () => ({ deadlineAt: Date.now() + 10_000, signal: new AbortController().signal });

describe('any string is a result', () => {
  it('surrogates, bidi marks, controls, NUL, emptiness, excess: each undeliverable/invalid_syntax, score 0, next to a good entry', async () => {
    const results = await world.run([...HOSTILE, 'ann@one.test']);
    expect(results).toHaveLength(HOSTILE.length + 1);
    for (const [i, result] of results.slice(0, -1).entries()) {
      expect(result).toEqual({
        email: HOSTILE[i],
        score: 0,
        verdict: 'undeliverable',
        reason: 'invalid_syntax',
        checks: {
          syntax: false,
          domainExists: null,
          mx: null,
          smtp: null,
          catchAll: null,
          disposable: null,
          role: null,
          free: null,
          provider: null,
        },
      });
      expect(verifyResultSchema.safeParse(result).success).toBe(true);
    }
    expect(results.at(-1)).toMatchObject({ email: 'ann@one.test', verdict: 'deliverable' });
  });

  it('one entry whose processing throws is that entry’s unexpected_error; the others are answered', async () => {
    const verifier = verifierWith({
      onResult: (result) => {
        if (result.email.startsWith('bob@')) throw new Error('a fault in one entry');
      },
    });
    const results = await verifier.verify(['ann@one.test', 'bob@one.test'], options());
    expect(verdicts(results)).toEqual({ 'ann@one.test': 'deliverable/accepted_email', 'bob@one.test': 'risky/unexpected_error' });
    expect(results[1]?.checks).toEqual({
      syntax: true,
      domainExists: null,
      mx: null,
      smtp: null,
      catchAll: null,
      disposable: null,
      role: null,
      free: null,
      provider: null,
    });
  });
});

describe('a check not made is null', () => {
  it('checks made are reported, none guessed', async () => {
    const [good, unknownDomain] = await world.run(['ann@one.test', 'ann@nowhere.test']);
    expect(good?.checks).toEqual({
      syntax: true,
      domainExists: true,
      mx: ['mx.one.test'],
      smtp: 'accepted',
      catchAll: false,
      disposable: false,
      role: false,
      free: false,
      provider: null,
    });
    expect(unknownDomain?.checks).toEqual({
      syntax: true,
      domainExists: false,
      mx: [],
      smtp: null,
      catchAll: null,
      disposable: false,
      role: false,
      free: false,
      provider: null,
    });
  });
});

describe('outcome cache at rest', () => {
  it('keys are SHA-256 hashes and values hold no address; a hit is rebuilt with the entry’s own local part', async () => {
    const cache = new Map<string, CachedOutcome>();
    const verifier = verifierWith({ cache });
    const [first] = await verifier.verify(['ann.private@gmail.con'], options());
    expect(first).toMatchObject({ verdict: 'deliverable', didYouMean: 'ann.private@gmail.com' });
    expect(cache.size).toBe(1);
    const [key, value] = [...cache][0] ?? ['', undefined];
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(value)).not.toMatch(/ann|private/);
    const server = world.smtp.get('127.0.0.121')!;
    const sessions = server.sessions;
    const [again] = await verifier.verify([' ann.private@GMAIL.con'], options());
    expect(server.sessions).toBe(sessions);
    expect(again).toEqual({ ...first, email: ' ann.private@GMAIL.con' });
  });
});

describe('the control', () => {
  it('goes first for its domain with postmaster, looks random, and stays the same for a domain through a day', async () => {
    const server = world.smtp.get('127.0.0.120')!;
    await world.run(['bob@one.test', 'ann@two.test', 'ann@one.test']);
    const rcpts = server.commands
      .at(-1)!
      .filter((line) => line.startsWith('RCPT TO:'))
      .map((line) => line.slice(9, -1));
    const seed = 'verify@probe.rig.test';
    expect(rcpts).toEqual([
      controlAddress('one.test', seed),
      'postmaster@one.test',
      'bob@one.test',
      'ann@one.test',
      controlAddress('two.test', seed),
      'postmaster@two.test',
      'ann@two.test',
    ]);
    expect(controlAddress('one.test', seed)).toMatch(/^[0-9a-f]{18}@one\.test$/);
    const noon = Date.UTC(2026, 10, 3, 12);
    expect(controlAddress('one.test', seed, noon)).toBe(controlAddress('one.test', seed, noon + 3_600_000));
    expect(controlAddress('one.test', seed, noon)).not.toBe(controlAddress('one.test', seed, noon + 86_400_000));
    expect(controlAddress('one.test', seed, noon)).not.toBe(controlAddress('one.test', 'verify@other.example', noon));
  });
});
