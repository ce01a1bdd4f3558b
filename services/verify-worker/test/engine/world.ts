/**
 * A scripted mail world for engine tests: a DNS server and SMTP servers on 127.0.0.x sharing
 * one port, each behaving like a kind of internet mail server. Each test file takes its own
 * range of addresses so files can run in parallel.
 */
import { afterAll, beforeAll } from 'vitest';
import { loadConfig } from '@svc/config';
import type { VerifyResult } from '@svc/contracts';
import { createVerifier } from '../../src/handler.ts';
import type { ProbeTuning } from '../../src/engine/mail-server-probe.ts';
import {
  findFreePort,
  startDnsServer,
  startSmtpServer,
  type RigDnsServer,
  type RigSmtpServer,
  type SmtpServerScript,
  type Zone,
} from '@svc/testkit';

export interface World {
  dns: RigDnsServer;
  smtp: Map<string, RigSmtpServer>;
  port: number;
  /** The verifier's environment for this world (fast timeouts, no result cache) with `env` over it. */
  env(env?: Record<string, string>): Record<string, string>;
  verifier(env?: Record<string, string>, tuning?: Partial<ProbeTuning>): ReturnType<typeof createVerifier>;
  run(emails: string[], env?: Record<string, string>, tuning?: Partial<ProbeTuning>): Promise<VerifyResult[]>;
}

/** Fast timings for tests; the retry and slow-reply tuning shortened to match. */
export const FAST_TUNING: Partial<ProbeTuning> = { retryDelaysMs: [100, 200], minRetryTimeLeftMs: 200, slowReplyMs: 150 };

export function useWorld(zone: Zone, servers: Record<string, SmtpServerScript>): World {
  const state: { dns?: RigDnsServer; port: number } = { port: 0 };
  const smtp = new Map<string, RigSmtpServer>();
  const worldEnv = (env: Record<string, string> = {}): Record<string, string> => ({
    ...state.dns?.canaryEnv,
    VERIFY_SMTP_PORT: String(state.port),
    VERIFY_ALLOW_PRIVATE_MX: 'true',
    VERIFY_HELO_NAME: 'probe.rig.test',
    VERIFY_CONNECT_TIMEOUT_MS: '1000',
    VERIFY_COMMAND_TIMEOUT_MS: '1000',
    VERIFY_BATCH_DEADLINE_MS: '5000',
    VERIFY_RESULT_CACHE_TTL_S: '0',
    ...env,
  });
  const verifier = (env: Record<string, string> = {}, tuning: Partial<ProbeTuning> = FAST_TUNING) =>
    createVerifier({
      // Each batch on its own sessions (their counts are what these worlds measure); idle-session reuse has its own world.
      config: loadConfig(worldEnv({ VERIFY_SMTP_SESSION_IDLE_MS: '0', ...env })),
      tuning,
    });
  beforeAll(async () => {
    state.dns = await startDnsServer(zone);
    state.port = await findFreePort(Object.keys(servers));
    for (const [host, script] of Object.entries(servers)) smtp.set(host, await startSmtpServer({ ...script, host, port: state.port }));
  });
  afterAll(async () => {
    await state.dns?.close();
    await Promise.all([...smtp.values()].map((server) => server.close()));
  });
  return {
    get dns() {
      if (state.dns === undefined) throw new Error('the world is not started');
      return state.dns;
    },
    smtp,
    get port() {
      return state.port;
    },
    env: worldEnv,
    verifier,
    run: (emails, env, tuning) =>
      verifier(env, tuning).verify(emails, { deadlineAt: Date.now() + 30_000, signal: new AbortController().signal }),
  };
}

/** `{ email: 'verdict/reason' }` for compact expectations. */
export const verdicts = (results: VerifyResult[]) =>
  Object.fromEntries(results.map((result) => [result.email, `${result.verdict}/${result.reason}`]));

/**
 * MX records and host addresses for a domain: one MX host per address, preferred in the order
 * given (`mx.<domain>` for a one-server domain, `mx1.<domain>`, `mx2.<domain>`... for several).
 */
export function mailDomain(domain: string, ...ips: [string, ...string[]]): Zone {
  const hosts = ips.map((ip, i) => ({ name: ips.length === 1 ? `mx.${domain}` : `mx${i + 1}.${domain}`, ip }));
  return {
    [domain]: { MX: hosts.map(({ name }, i): [number, string] => [10 * (i + 1), name]) },
    ...Object.fromEntries(hosts.map(({ name, ip }) => [name, { A: [ip] }])),
  };
}
