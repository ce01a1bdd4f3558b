/**
 * The product on a Redis Cluster (3 primaries, 3 replicas) and on Sentinel (primary, replica,
 * 3 sentinels), all real processes (decisions, "Redis topologies"): the key tool, QR, verify, a
 * list and usage work; then a primary is frozen (SIGSTOP) under load and the test measures what
 * the contract bounds: no request answered later than its deadline + 2 s, calls succeed again
 * within 10 s of the promotion, /readyz false on all three processes while no write can succeed
 * and true after, the meter at most the 200s answered (none billed without its answer, none
 * twice) and short of them by no more than asynchronous replication can lose, and no log flood.
 * The figures are printed (`[topology]` lines) for the issue's note.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMailRig, startRedisCluster, startRedisSentinel, waitUntil, type MailRig, type RedisServerNode } from '@svc/testkit';
import { readyStatus, startTopologyProduct, type TopologyProduct } from './product.ts';
import { runLoad, type Call } from './load.ts';

const QR_DEADLINE_MS = 10_000;
/** Calls the load keeps in flight: what a failure can catch between a record and its replication. */
const LOAD_CALLS_AT_ONCE = 4;

interface Rig {
  env: Record<string, string>;
  /** The primary to fail now, and how to tell that a replica took over from it. */
  victim(product: TopologyProduct): Promise<RedisServerNode>;
  promoted(victim: RedisServerNode): Promise<boolean>;
  /** Every primary has a replica in sync: a failover now loses only what replication had not sent. */
  inSync(): Promise<boolean>;
  close(): Promise<void>;
}

async function clusterRig(): Promise<Rig> {
  const cluster = await startRedisCluster({ primaries: 3, nodeTimeoutMs: 1_000 });
  let tag = '';
  return {
    env: cluster.env,
    // The primary of the key's meter slot: every metered call writes there.
    victim: async (product) => {
      tag = product.key.id;
      return cluster.primaryFor(tag);
    },
    promoted: (victim) => cluster.promotedFor(tag, victim),
    inSync: () => cluster.inSync(),
    close: () => cluster.close(),
  };
}

async function sentinelRig(): Promise<Rig> {
  const rig = await startRedisSentinel({ downAfterMs: 1_000, failoverTimeoutMs: 3_000 });
  const nodes = [rig.primary, rig.replica];
  return {
    env: rig.env,
    victim: async () => {
      const port = await rig.masterPort();
      const node = nodes.find((candidate) => candidate.port === port);
      if (node === undefined) throw new Error(`the sentinels name no known master (${String(port)})`);
      return node;
    },
    promoted: async (victim) => {
      const port = await rig.masterPort();
      return port !== undefined && port !== victim.port;
    },
    inSync: () => rig.inSync(),
    close: () => rig.close(),
  };
}

let mail: MailRig;
beforeAll(async () => {
  mail = await startMailRig('topo.test', '127.0.0.61', ['ann@topo.test', 'bob@topo.test']);
});
afterAll(async () => mail?.close());

/** Log lines by their message (pino's `msg`), for the report of what an outage writes. */
function messageCounts(lines: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const line of lines) {
    let message = line.slice(0, 60);
    try {
      message = String((JSON.parse(line) as { msg?: unknown }).msg);
    } catch {
      // Not a JSON line (a stack trace): counted by its start.
    }
    counts[message] = (counts[message] ?? 0) + 1;
  }
  return counts;
}

const auth = (product: TopologyProduct) => ({ authorization: `Bearer ${product.key.key}` });

async function getJson(product: TopologyProduct, path: string, init: RequestInit = {}): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${product.baseUrl}${path}`, { ...init, headers: { ...auth(product), ...(init.headers ?? {}) } });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : (JSON.parse(text) as unknown) };
}

async function qrCallsMetered(product: TopologyProduct): Promise<number> {
  const usage = await getJson(product, '/v1/usage');
  expect(usage.status).toBe(200);
  return (usage.body as { operations: Record<string, { calls: number }> }).operations['qr.generate']?.calls ?? 0;
}

describe.each([
  ['cluster', clusterRig],
  ['sentinel', sentinelRig],
] as const)('on Redis %s', (name, makeRig) => {
  let rig: Rig | undefined;
  let product: TopologyProduct | undefined;
  let qrAnswered = 0;
  // Charges a failure may lose to asynchronous replication, summed over the failures so far.
  let lossAllowed = 0;

  beforeAll(async () => {
    rig = await makeRig();
    product = await startTopologyProduct(rig.env, { ...mail.env, RATE_LIMIT_QR_GENERATE: '0', LIST_RETRY_DELAYS_S: '' });
  });
  afterAll(async () => {
    await product?.close();
    await rig?.close();
  });

  it('the key tool, QR, verify, a list and usage work', async () => {
    const p = product!;
    const qr = await fetch(`${p.baseUrl}/v1/qr/qr?data=topology`, { headers: auth(p) });
    expect(qr.status, p.output()).toBe(200);
    expect(await qr.text()).toContain('<svg');
    qrAnswered += 1;

    const single = await getJson(p, '/v1/email-verify/verify?email=ann@topo.test');
    expect(single.status, p.output()).toBe(200);
    expect(single.body).toMatchObject({ verdict: 'deliverable' });

    const created = await getJson(p, '/v1/email-verify/lists', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ emails: ['ann@topo.test', 'bob@topo.test', 'nobody@topo.test'] }),
    });
    expect(created.status, p.output()).toBe(202);
    const id = (created.body as { id: string }).id;
    await expect
      .poll(async () => ((await getJson(p, `/v1/email-verify/lists/${id}`)).body as { status: string }).status, { timeout: 20_000 })
      .toBe('completed')
      .catch((error: unknown) => {
        throw new Error(`list ${id} did not complete; the processes wrote:\n${p.output()}`, { cause: error });
      });
    const list = await getJson(p, `/v1/email-verify/lists/${id}`);
    expect(list.body).toMatchObject({ processed: 3, summary: { deliverable: 2, undeliverable: 1 }, costUsd: '0' });
    expect((await getJson(p, '/v1/email-verify/lists')).body).toMatchObject({ lists: [{ id }] });

    expect(await qrCallsMetered(p)).toBe(1);
    // Nothing on a cluster may reach a log as CROSSSLOT, MOVED or EXECABORT in normal work.
    expect(p.output()).not.toMatch(/CROSSSLOT|EXECABORT|MOVED/);
  });

  /** Fails the current primary (`freeze`: SIGSTOP, thawed at the end; `kill`: SIGKILL) under load and measures. */
  async function failover(how: 'freeze' | 'kill'): Promise<void> {
    const p = product!;
    const r = rig!;
    // A second failure only once the first is healed (the old primary rejoined and synced):
    // failing a primary whose replica holds nothing yet loses everything, whatever the product does.
    await waitUntil(() => r.inSync(), 30_000, 'every primary to have a replica in sync');
    const victim = await r.victim(p);
    const calls: Call[] = [];
    const load = runLoad(`${p.baseUrl}/v1/qr/qr?data=under-load`, auth(p), LOAD_CALLS_AT_ONCE, calls);
    await new Promise((resolve) => setTimeout(resolve, 1_500));

    const frozenAt = Date.now();
    if (how === 'freeze') victim.freeze();
    else await victim.kill();
    let promotedAt: number | undefined;
    let recoveredAt: number | undefined;
    const readiness = new Map(p.processes.map((proc) => [proc.name, { falseWhileDown: false, trueAfter: false }]));
    try {
      while (Date.now() - frozenAt < 40_000) {
        promotedAt ??= (await r.promoted(victim)) ? Date.now() : undefined;
        const statuses = await Promise.all(p.processes.map((proc) => readyStatus(proc.readyUrl)));
        p.processes.forEach((proc, i) => {
          const seen = readiness.get(proc.name)!;
          if (promotedAt === undefined && statuses[i] === 503) seen.falseWhileDown = true;
          if (promotedAt !== undefined && statuses[i] === 200) seen.trueAfter = true;
        });
        if (promotedAt !== undefined && recoveredAt === undefined) {
          const ok = calls.find((call) => call.status === 200 && call.startedAt > promotedAt!);
          if (ok !== undefined) recoveredAt = ok.endedAt;
        }
        if (recoveredAt !== undefined && [...readiness.values()].every((seen) => seen.trueAfter)) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      // Some load after the recovery, then the old primary comes back (as a replica).
      await new Promise((resolve) => setTimeout(resolve, 2_000));
    } finally {
      if (how === 'freeze') victim.thaw();
      await load.stop();
    }
    const outageEnd = recoveredAt ?? Date.now();
    const answered = calls.filter((call) => call.status === 200).length;
    qrAnswered += answered;
    const longest = Math.max(...calls.map((call) => call.endedAt - call.startedAt));
    const longestWhileFrozen = Math.max(
      0,
      ...calls.filter((call) => call.endedAt >= frozenAt && call.startedAt <= outageEnd).map((call) => call.endedAt - call.startedAt),
    );
    const logLines = p.processes.map((proc) => {
      const during = proc.lines.filter((line) => line.at >= frozenAt && line.at <= outageEnd + 1_000);
      return { name: proc.name, lines: during.length, kinds: messageCounts(during.map((line) => line.text)) };
    });
    const callsInOutage = calls.filter((call) => call.endedAt >= frozenAt && call.startedAt <= outageEnd).length;
    // The meter is read once a frozen primary rejoined (its writes of the frozen time discarded).
    if (how === 'freeze') await new Promise((resolve) => setTimeout(resolve, 1_500));
    const metered = await qrCallsMetered(p);
    const byStatus = calls.reduce<Record<number, number>>((out, call) => ({ ...out, [call.status]: (out[call.status] ?? 0) + 1 }), {});
    console.log(
      `[topology] ${name}, primary ${how === 'freeze' ? 'frozen' : 'killed'}: promotion ${promotedAt === undefined ? 'never' : `${promotedAt - frozenAt} ms`} after the freeze; ` +
        `calls succeed again ${recoveredAt === undefined || promotedAt === undefined ? 'never' : `${recoveredAt - promotedAt} ms`} after it; ` +
        `longest wait while frozen ${longestWhileFrozen} ms (longest overall ${longest} ms); ` +
        `answers ${JSON.stringify(byStatus)}; metered ${metered} of ${qrAnswered} 200s; ` +
        `log lines during the outage ${JSON.stringify(logLines)} for ${callsInOutage} calls`,
    );

    expect(promotedAt, 'the replica was never promoted').toBeDefined();
    expect(recoveredAt, `no call succeeded after the promotion\n${p.output()}`).toBeDefined();
    expect(recoveredAt! - promotedAt!).toBeLessThanOrEqual(10_000);
    expect(longest).toBeLessThanOrEqual(QR_DEADLINE_MS + 2_000);
    // Every call was answered (none cut), and every refusal says when to come back.
    expect(calls.filter((call) => call.status === 0)).toEqual([]);
    expect(calls.filter((call) => call.status === 503 && call.retryAfter === null)).toEqual([]);
    for (const [proc, seen] of readiness) {
      expect(seen.falseWhileDown, `${proc} /readyz was never false while the primary was down`).toBe(true);
      expect(seen.trueAfter, `${proc} /readyz was never true again after the promotion`).toBe(true);
    }
    // Never more than the 200s: a record whose reply the failure lost is sent again under its
    // charge id once the replica took over (it holds the record or not) and confirmed or voided
    // (@svc/metering's ChargeRecorder); a frozen primary's late records are refused.
    // Fewer only by what asynchronous replication may lose (decisions, "Billing across a
    // failover"): Redis writes a client's reply and its replicas' stream one after the other, so a
    // primary stopped between the two has confirmed records its replica never got. A CI run saw
    // one such record in 1,610 calls. At most the calls in flight at the failure can be lost.
    lossAllowed += LOAD_CALLS_AT_ONCE;
    expect(metered).toBeLessThanOrEqual(qrAnswered);
    expect(qrAnswered - metered, 'charges lost beyond the calls in flight at the failures').toBeLessThanOrEqual(lossAllowed);
    // No flood: at most about one line per failed call (its 503 warning) and a few per error kind.
    for (const { name: proc, lines } of logLines) expect(lines, `${proc} wrote ${lines} lines`).toBeLessThanOrEqual(callsInOutage + 50);
    expect(p.output()).not.toMatch(/CROSSSLOT|EXECABORT/);
  }

  it('a primary frozen under load (SIGSTOP): bounded waits, recovery within 10 s of the promotion, honest readiness, the meter kept', () =>
    failover('freeze'));

  // The frozen primary came back as a replica: now its successor dies outright.
  it('the new primary killed under load (SIGKILL): the same bounds', () => failover('kill'));
});
