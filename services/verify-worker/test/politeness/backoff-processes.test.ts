/**
 * The provider back-off is the deployment's, not a process's: real verify-worker processes
 * (`node` on main.ts) and a gateway over one Redis prefix, against a provider that throttles like
 * Gmail (three MX hosts sharing 40 RCPTs a minute per client, `421-4.7.28` and a close beyond it,
 * a block each new connection re-arms). Worker A meets the throttle; A stops, and worker B,
 * started afterwards, answers the next batch `throttled` without a connection to any of the
 * provider's hosts; then A, started again, does the same: the back-off lives in Redis and
 * survives a worker's restart.
 */
import { execFile, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  childEnv,
  createRigThrottle,
  dropPrefix,
  findFreePort,
  freePort,
  spawnNode,
  startDnsServer,
  startSmtpServer,
  stopProcessTree,
  testRedisUrl,
  uniquePrefix,
  waitUntil,
  type RigDnsServer,
  type RigSmtpServer,
} from '@svc/testkit';

const GOOGLE = ['gmail-smtp-in.l.google.com', 'alt1.gmail-smtp-in.l.google.com', 'alt2.gmail-smtp-in.l.google.com'];
const IPS = ['127.0.0.235', '127.0.0.236', '127.0.0.237'];
const at = (domain: string, count: number) => Array.from({ length: count }, (_, i) => `k${i}@${domain}`);
const throttle = createRigThrottle({ perWindow: 40, windowMs: 60_000 });

interface BatchBody {
  results: Array<{ email: string; verdict: string; reason: string }>;
}

describe('the provider back-off across worker processes', () => {
  const url = testRedisUrl();
  const prefix = uniquePrefix('backoff-processes');
  let key: string;
  let dns: RigDnsServer;
  const servers: RigSmtpServer[] = [];
  let env: Record<string, string>;
  let origin: string;
  const children = new Set<ChildProcess>();
  const output = new Map<ChildProcess, string>();

  const spawn = (file: string, extra: Record<string, string>) => {
    const child = spawnNode(file, { env: { ...env, ...extra }, stdio: ['ignore', 'pipe', 'pipe'] });
    const keep = (chunk: Buffer) => output.set(child, ((output.get(child) ?? '') + chunk.toString()).slice(-20_000));
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    children.add(child);
    return child;
  };
  const ready = (at: string, what: string) =>
    waitUntil(async () => (await fetch(`${at}/readyz`).catch(() => undefined))?.status === 200, 30_000, `${what} to be ready`);
  const startWorker = async (name: string) => {
    const port = await freePort();
    const child = spawn('services/verify-worker/src/main.ts', { WORKER_METRICS_PORT: String(port), WORKER_METRICS_HOST: '127.0.0.1' });
    await ready(`http://127.0.0.1:${port}`, name);
    return child;
  };
  const stop = async (child: ChildProcess) => {
    await stopProcessTree(child);
    children.delete(child);
  };
  const batch = async (emails: string[]) => {
    const response = await fetch(`${origin}/v1/email-verify/verify/batch`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ emails }),
    });
    expect(response.status).toBe(200);
    const reasons = new Map<string, number>();
    for (const result of ((await response.json()) as BatchBody).results) {
      const label = `${result.verdict}/${result.reason}`;
      reasons.set(label, (reasons.get(label) ?? 0) + 1);
    }
    return Object.fromEntries(reasons);
  };
  const connections = () => servers.reduce((sum, server) => sum + server.connections, 0);

  beforeAll(async () => {
    dns = await startDnsServer({
      'gm.test': { MX: GOOGLE.map((name, i): [number, string] => [5 + 10 * i, name]) },
      'gm2.test': { MX: GOOGLE.map((name, i): [number, string] => [5 + 10 * i, name]) },
      ...Object.fromEntries(GOOGLE.map((name, i) => [name, { A: [IPS[i]!] }])),
    });
    const port = await findFreePort(IPS);
    const users = [...at('gm.test', 60), 'postmaster@gm.test', ...at('gm2.test', 60), 'postmaster@gm2.test'];
    for (const host of IPS) servers.push(await startSmtpServer({ host, port, users, throttle }));
    // The operator's key tool, as a process (a service's tests import no other service).
    const created = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'services/gateway/src/keys-cli.ts', 'create', '--name', 'backoff'],
      {
        env: childEnv({ REDIS_URL: url, REDIS_PREFIX: prefix }),
        timeout: 20_000,
      },
    );
    key = /^sk_[A-Za-z0-9]{32}$/m.exec(created.stdout)?.[0] ?? '';
    expect(key, created.stdout).not.toBe('');
    const gatewayPort = await freePort();
    origin = `http://127.0.0.1:${gatewayPort}`;
    env = childEnv({
      ...dns.canaryEnv,
      REDIS_URL: url,
      REDIS_PREFIX: prefix,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      VERIFY_SMTP_PORT: String(port),
      VERIFY_ALLOW_PRIVATE_MX: 'true',
      VERIFY_HELO_NAME: 'probe.rig.test',
      VERIFY_RESULT_CACHE_TTL_S: '0',
      VERIFY_BATCH_DEADLINE_MS: '8000',
      // Budgets above the provider's real limit (as an operator may set them): the throttle decides.
      VERIFY_PROVIDER_BUDGETS: '{"google":{"sessionsPerMinute":60,"recipientsPerSession":100,"recipientsPerMinute":1000}}',
    });
    spawn('services/gateway/src/main.ts', { PORT: String(gatewayPort) });
    await ready(origin, 'the gateway');
  }, 60_000);

  afterAll(async () => {
    await Promise.all([...children].map((child) => stopProcessTree(child)));
    await Promise.all([dns?.close(), ...servers.map((server) => server.close())]);
    await dropPrefix(url, prefix);
  });

  it('a second worker opens no session during the back-off the first learnt, and the back-off survives a restart', async () => {
    try {
      const first = await startWorker('worker A');
      // 40 RCPTs answered (two controls, 38 addresses), then 421-4.7.28: the rest waits for the back-off.
      expect(await batch(at('gm.test', 100))).toEqual({ 'deliverable/accepted_email': 38, 'risky/throttled': 62 });
      expect(throttle.replies).toBe(1);
      const learnt = connections();
      await stop(first);

      const second = await startWorker('worker B');
      expect(await batch(at('gm2.test', 10))).toEqual({ 'risky/throttled': 10 });
      await stop(second);

      await startWorker('worker A, restarted');
      expect(await batch(at('gm2.test', 10))).toEqual({ 'risky/throttled': 10 });

      expect(connections()).toBe(learnt);
      expect(throttle.connectionsWhileBlocked).toBe(0);
      expect(throttle.replies).toBe(1);
    } catch (error) {
      // The processes' own words, for a failure nobody can reproduce at will.
      for (const text of output.values()) console.error(text);
      throw error;
    }
  }, 120_000);
});
