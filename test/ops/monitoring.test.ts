/**
 * The monitoring proven live: the product in distributed mode (gateway, one qr-worker, one
 * verify-worker as real processes on the shared test Redis), a Redis exporter, and a real
 * Prometheus scraping them every second with the real rule file. After traffic of every kind
 * (successes on QR and verification, 4xx, 429 through a low rate limit, a 504 through a short
 * deadline and a stalled worker), every query of every Grafana panel and every rule
 * expression is evaluated through Prometheus's HTTP API: none may fail, every panel query must
 * return data, and above 0 unless listed below with the reason; the alert the traffic provokes
 * fires (and is active in Prometheus), the others stay silent.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { createRedis, waitForRedis } from '@svc/jobs/redis';
import { RedisKeyStore, generateApiKey } from '@svc/gateway';
import { dropPrefix, startMailRig, testRedisUrl, uniquePrefix, waitUntil, type MailRig } from '@svc/testkit';
import { freePort, startService, type ServiceProcess } from '@svc/testkit';
import { deployedJobNames, startPrometheus, startRedisExporter, type RunningPrometheus, type Sample } from './prometheus.ts';

interface Dashboard {
  panels: Array<{ type: string; title: string; targets?: Array<{ expr: string }> }>;
}
interface RuleFile {
  groups: Array<{ rules: Array<{ alert?: string; record?: string; expr: string }> }>;
}

const dashboard = JSON.parse(readFileSync('deploy/grafana/dashboards/service.json', 'utf8')) as Dashboard;
const rules = (parse(readFileSync('deploy/prometheus/alerts.yml', 'utf8')) as RuleFile).groups.flatMap((group) => group.rules);

/**
 * Panel queries that rightly read 0 (or anything) once the traffic below is over, and why; every
 * other panel query must return a finite value above 0. Checked both ways, so the list stays true.
 */
const EXPECTED_ZERO: Record<string, string> = {
  'operation:slo_availability_errors:ratio_rate1h / 0.001': 'no call was answered 500 or 503',
  'operation:slo_availability_errors:ratio_rate6h / 0.001': 'no call was answered 500 or 503',
  'max by (queue, state) (queue_jobs{state=~"waiting|prioritized|active|delayed"})': 'the queues have drained',
  'max by (queue) (queue_oldest_job_age_seconds)': 'the queues have drained',
  'sum by (queue) (worker_active_jobs)': 'no job is running any more',
  'sum(smtp_sessions_open)': 'every SMTP session has ended',
  // The scrape itself is no longer one: /metrics has a listener of its own (GATEWAY_METRICS_PORT).
  'sum by (instance) (gateway_inflight_requests)': 'every call has been answered, and the scrape is not an API request',
  'sum(rate(private_address_refusals_total[5m]))': 'the mail rig is on loopback and the verifier is told to allow it',
  'sum by (egress, provider) (increase(verify_egress_blocks_total[30m])) or on() vector(0)': 'no mail server refused the egress by name',
  'sum by (provider) (increase(verify_egress_blocks_total[30m])) or on() vector(0)': 'no mail server refused the egress by name',
  'max by (egress) (verify_egress_set_aside)': 'no egress was refused, so none is set aside',
  'sum by (provider, egress) (increase(verify_throttled_total[30m])) or on() vector(0)': 'the mail rig throttles no one',
  'max by (provider, egress) (verify_provider_backoff_seconds) or on() vector(0)': 'no provider throttled, so no back-off',
};
const EITHER: Record<string, string> = {
  redis_memory_max_bytes: 'the shared test Redis may run without a maxmemory (0)',
};

/**
 * What each alert's expression must return after the traffic: 'fires' (a series for the label set
 * given), 'silent', or a reason why either is right.
 */
const ALERT_EXPECTATIONS: Record<string, { fires: Record<string, string> } | 'silent' | { either: string }> = {
  // One batch of three answered 504: a third of the deadline budget spent in every window. QR
  // series may join them when a loaded machine makes a few QR calls slower than 250 ms.
  LatencyBudgetBurnFast: { fires: { operation: 'email-verify.batch', sli: 'verify_within_deadline' } },
  LatencyBudgetBurnSlow: { fires: { operation: 'email-verify.batch', sli: 'verify_within_deadline' } },
  AvailabilityBudgetBurnFast: 'silent',
  AvailabilityBudgetBurnSlow: 'silent',
  GatewayAbsent: 'silent',
  QrWorkersAbsent: 'silent',
  VerifyWorkersAbsent: 'silent',
  RedisDown: 'silent',
  QueueBacklog: 'silent',
  JobsWaitingTooLong: 'silent',
  SmtpConnectionsFailing: 'silent',
  // The rig's resolver answers its canary and its canary port accepts: the verifier sees.
  VerifyResolverUntrusted: 'silent',
  VerifyEgressClosed: 'silent',
  VerifyEgressBlocklisted: 'silent',
  VerifyProviderThrottled: 'silent',
  // The shared test Redis may or may not have a maxmemory set, and how full it is is not ours.
  RedisMemoryHigh: { either: 'depends on the shared test Redis' },
};

const finite = (samples: Sample[]) => samples.filter((sample) => Number.isFinite(Number(sample.value[1])));
const status = async (url: string): Promise<number> => (await fetch(url).catch(() => undefined))?.status ?? 0;

describe('dashboards and alerts against a live Prometheus', () => {
  const prefix = uniquePrefix('monitoring');
  const key = generateApiKey();
  const services: ServiceProcess[] = [];
  let verifyWorker: ServiceProcess;
  let prometheus: RunningPrometheus | undefined;
  let rig: MailRig;
  let gateway: string;
  let metered = 0;

  const request = async (path: string, init: RequestInit & { key?: string | null } = {}) => {
    const headers = new Headers(init.headers);
    if (init.key !== null) headers.set('authorization', `Bearer ${init.key ?? key}`);
    const response = await fetch(`${gateway}${path}`, { ...init, headers });
    await response.arrayBuffer();
    if (path.startsWith('/v1/qr/') || path.startsWith('/v1/email-verify/')) metered++;
    return response.status;
  };
  const batch = (emails: string[]) =>
    request('/v1/email-verify/verify/batch', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ emails }),
    });

  beforeAll(async () => {
    const redisUrl = testRedisUrl();
    const redis = createRedis(redisUrl, 'request');
    await waitForRedis(redis, 5_000);
    await new RedisKeyStore(redis, prefix).create('monitoring', key);
    redis.disconnect();
    rig = await startMailRig('ops.test', '127.0.0.41', ['ann@ops.test', 'bob@ops.test']);

    const [gatewayPort, gatewayMetricsPort, qrPort, verifyPort] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    gateway = `http://127.0.0.1:${gatewayPort}`;
    const common = { REDIS_URL: redisUrl, REDIS_PREFIX: prefix, LOG_LEVEL: 'warn' };
    verifyWorker = startService('services/verify-worker/src/main.ts', {
      ...common,
      ...rig.env,
      // Every wave probes the mail server again, so the SMTP panels see their counters move.
      VERIFY_RESULT_CACHE_TTL_S: '0',
      WORKER_METRICS_PORT: String(verifyPort),
      WORKER_METRICS_HOST: '127.0.0.1',
    });
    services.push(
      verifyWorker,
      startService('services/gateway/src/main.ts', {
        ...common,
        PORT: String(gatewayPort),
        GATEWAY_METRICS_PORT: String(gatewayMetricsPort),
        HOST: '127.0.0.1',
        // Short, so that a stalled worker makes a call miss it quickly.
        REQUEST_DEADLINE_MS: '2500',
        RATE_LIMIT_QR_WIFI: '2',
        FREE_ALLOWANCE_QR_GENERATE: '2',
      }),
      startService('services/qr-worker/src/main.ts', { ...common, WORKER_METRICS_PORT: String(qrPort), WORKER_METRICS_HOST: '127.0.0.1' }),
    );
    const exporter = await startRedisExporter(redisUrl);
    services.push(exporter.service);
    const targets: Record<string, string> = {
      gateway: `127.0.0.1:${gatewayMetricsPort}`,
      'qr-worker': `127.0.0.1:${qrPort}`,
      'verify-worker': `127.0.0.1:${verifyPort}`,
      redis: exporter.target,
    };
    expect(Object.keys(targets).sort()).toEqual(deployedJobNames().sort());
    prometheus = await startPrometheus(targets);
    const running = prometheus;

    const ready = [`${gateway}/readyz`, `http://${targets['qr-worker']}/readyz`, `http://${targets['verify-worker']}/readyz`];
    ready.push(`${running.url}/-/ready`);
    const diagnostics = () => [...services, running].map((service) => service.output()).join('\n---\n');
    await waitUntil(
      async () => (await Promise.all(ready.map(status))).every((code) => code === 200),
      30_000,
      'every process to be ready',
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}\n${diagnostics()}`);
    });
    await waitUntil(
      async () => (await running.query('up == 1').catch(() => [])).length === 4,
      15_000,
      'Prometheus to scrape all four targets as up',
    ).catch(async (error: unknown) => {
      throw new Error(`${String(error)}: ${JSON.stringify(await running.query('up'))}\n${diagnostics()}`);
    });
  }, 60_000);

  afterAll(async () => {
    await Promise.all([...services.map((service) => service.stop()), prometheus?.stop()]);
    await rig?.close();
    await dropPrefix(testRedisUrl(), prefix);
  });

  it('every panel query and every rule expression evaluates; panels the traffic feeds have data; alerts fire as they should', async () => {
    const running = prometheus!;
    // Two waves a few scrapes apart, so that rates see the counters move.
    const wave = async () => {
      for (let i = 0; i < 4; i++) expect(await request(`/v1/qr/qr?data=wave-${i}`)).toBe(200);
      for (let i = 0; i < 2; i++) expect([200, 429]).toContain(await request('/v1/qr/wifi?ssid=office&password=secret123&security=WPA'));
      expect(await batch(['ann@ops.test', 'nobody@ops.test'])).toBe(200);
      expect(await request('/v1/email-verify/verify?email=bob@ops.test')).toBe(200);
      expect(await request('/v1/qr/qr?data=')).toBe(400);
      expect(await request('/v1/qr/qr?data=x', { key: null })).toBe(401);
      expect(await request('/no/such/route')).toBe(404);
    };
    await wave();
    // The wifi limit is 2 a minute: the third call and after are refused.
    expect(await request('/v1/qr/wifi?ssid=office&password=secret123&security=WPA')).toBe(429);
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    await wave();
    // A verify-worker that stalls (frozen, as a starved or swapping process would) past the
    // request's 2.5 s deadline: the batch is answered 504, and the job expires once it thaws.
    verifyWorker.signal('SIGSTOP');
    try {
      expect(await batch(['slow@ops.test'])).toBe(504);
    } finally {
      verifyWorker.signal('SIGCONT');
    }

    // Everything the gateway counted has been scraped, the thawed worker is scraped again, and
    // the rules have evaluated on it.
    await expect.poll(async () => (await running.query('up{job="verify-worker"} == 1')).length, { timeout: 10_000, interval: 250 }).toBe(1);
    await expect
      .poll(async () => Number((await running.query('sum(api_calls_total)'))[0]?.value[1] ?? 0), { timeout: 10_000, interval: 250 })
      .toBe(metered);
    await expect
      .poll(async () => (await running.query('ALERTS{alertname="LatencyBudgetBurnFast",alertstate="firing"}')).length, {
        timeout: 10_000,
        interval: 250,
      })
      .toBeGreaterThan(0);

    const panelQueries = dashboard.panels.flatMap((panel) =>
      (panel.targets ?? []).map((target) => ({ panel: panel.title, expr: target.expr })),
    );
    const panelResults = await Promise.all(
      panelQueries.map(async (query) => ({ ...query, samples: finite(await running.query(query.expr)) })),
    );
    const missing = panelResults.filter((result) => result.samples.length === 0).map((result) => `${result.panel}: ${result.expr}`);
    expect(missing, 'panel queries without data').toEqual([]);
    const readsZero = (result: (typeof panelResults)[number]) => result.samples.every((sample) => Number(sample.value[1]) === 0);
    const zero = panelResults.filter((result) => !(result.expr in EITHER) && readsZero(result)).map((result) => result.expr);
    expect(zero.sort(), 'panel queries that read 0').toEqual(Object.keys(EXPECTED_ZERO).sort());

    const ruleResults = await Promise.all(
      rules.map(async (rule) => ({ name: rule.alert ?? rule.record!, alert: rule.alert, samples: await running.query(rule.expr) })),
    );
    for (const result of ruleResults.filter((entry) => entry.alert !== undefined)) {
      const expected = ALERT_EXPECTATIONS[result.name];
      expect(expected, `${result.name} has no expectation in this test`).toBeDefined();
      if (expected === 'silent') expect(result.samples, result.name).toEqual([]);
      else if (expected !== undefined && 'fires' in expected)
        expect(
          result.samples.map((sample) => sample.metric),
          result.name,
        ).toContainEqual(expect.objectContaining(expected.fires));
    }
    // The recording rules behind the burn-rate panels have a value for every operation that had traffic.
    const recorded = ruleResults.filter((entry) => entry.alert === undefined);
    for (const result of recorded) expect(finite(result.samples).length, result.name).toBeGreaterThan(0);

    const alertResults = ruleResults.filter((entry) => entry.alert !== undefined);
    console.log(
      `[monitoring] ${panelQueries.length} panel queries (all with data, ${panelResults.filter((result) => !readsZero(result)).length} above 0), ` +
        `${alertResults.length} alert expressions (${alertResults.filter((entry) => entry.samples.length > 0).length} returned data: ` +
        `${alertResults
          .filter((entry) => entry.samples.length > 0)
          .map((entry) => entry.name)
          .join(', ')}), ${recorded.length} recording rules (all with data)`,
    );
  }, 60_000);
});
