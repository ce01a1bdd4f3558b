/**
 * A worker killed with SIGKILL in the middle of its jobs: two real worker processes of a kind
 * under load, one killed while Redis shows it holding jobs (their locks carry its worker id).
 * Every job it held is started again by the survivor within the queue's takeover budget (QR 3 s,
 * verify 10 s after the kill), every request is answered 200, and the meter counts exactly the
 * calls answered 200 (a job run twice is billed once: billing is the gateway's, per answer).
 *
 * The victim is frozen (SIGSTOP) at a moment when Redis shows it holding jobs, the held jobs are
 * read, and it is killed (SIGKILL): takeover is measured from the freeze, when it stopped
 * working, to the survivor's own log line `job started` for that job (pino's `time`, same host
 * clock).
 */
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedis, type Redis } from '@svc/jobs/redis';
import { bullPrefix } from '@svc/jobs/bullmq';
import { signalGroup, startMailRig, testRedisUrl, waitUntil, type MailRig } from '@svc/testkit';
import { call, startServer, type TestServer, postBatch } from '../support/servers.ts';
import { linesOf, startWorkerProcess, type WorkerProcess, type WorkerService } from './worker-processes.ts';

const USERS = ['ann@crash.test', 'bob@crash.test', 'cat@crash.test'];
/** Each SMTP reply 250 ms late, RCPTs one at a time: a batch of 3 takes about 2 s. */
const SLOWISH = { replyDelayMs: 250, pipelining: false } as const;

interface Answer {
  requestId: string;
  status: number;
  at: number;
}

interface Held {
  jobId: string;
  requestId: string;
}

let rig: MailRig;
let redis: Redis;
beforeAll(async () => {
  rig = await startMailRig('crash.test', '127.0.0.82', USERS);
  Object.assign(rig.smtp.script, SLOWISH);
  redis = createRedis(testRedisUrl(), 'blocking', 'crash-test');
});
afterAll(async () => {
  redis?.disconnect();
  await rig?.close();
});

/** Active jobs of a queue whose lock belongs to one of `workerIds` (BullMQ tokens are `<worker id>:<n>`). */
async function jobsHeldBy(prefix: string, queue: string, workerIds: string[]): Promise<Held[]> {
  const base = `${bullPrefix(prefix, queue)}:${queue}`;
  const active = await redis.lrange(`${base}:active`, 0, -1);
  const held: Held[] = [];
  for (const jobId of active) {
    const [lock, data] = await Promise.all([redis.get(`${base}:${jobId}:lock`), redis.hget(`${base}:${jobId}`, 'data')]);
    if (lock === null || data === null || !workerIds.some((id) => lock.startsWith(`${id}:`))) continue;
    held.push({ jobId, requestId: (JSON.parse(data) as { requestId: string }).requestId });
  }
  return held;
}

/** `concurrency` callers, each sending one request after another until `stop()`. */
function load(concurrency: number, send: () => Promise<Answer>) {
  const answers: Answer[] = [];
  let running = true;
  const loops = Array.from({ length: concurrency }, async () => {
    while (running) answers.push(await send());
  });
  return {
    answers,
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

interface Scenario {
  service: WorkerService;
  queue: string;
  operation: 'qr.generate' | 'email-verify.batch';
  budgetMs: number;
  concurrency: number;
  env: Record<string, string>;
  send: (server: TestServer) => Promise<Answer>;
}

const SCENARIOS: Scenario[] = [
  {
    service: 'qr-worker',
    queue: 'qr',
    operation: 'qr.generate',
    budgetMs: 3_000,
    concurrency: 24,
    env: { QR_WORKER_CONCURRENCY: '8' },
    send: async (server) => {
      const data = `https://example.com/${'crash-takeover/'.repeat(8)}${Math.random()}`;
      const response = await call(server, `/v1/qr/qr?data=${encodeURIComponent(data)}&scale=20`, { key: server.key });
      return { requestId: response.headers.get('x-request-id') ?? '', status: response.status, at: Date.now() };
    },
  },
  {
    service: 'verify-worker',
    queue: 'verify',
    operation: 'email-verify.batch',
    budgetMs: 10_000,
    concurrency: 6,
    env: { VERIFY_WORKER_CONCURRENCY: '4', VERIFY_MAX_CONNECTIONS_PER_HOST: '8', VERIFY_RESULT_CACHE_TTL_S: '0' },
    send: async (server) => {
      const response = await postBatch(server, server.key, USERS);
      return { requestId: response.headers.get('x-request-id') ?? '', status: response.status, at: Date.now() };
    },
  },
];

describe.each(SCENARIOS)('$service: one of two workers killed with SIGKILL under load', (scenario) => {
  let server: TestServer;
  let workers: WorkerProcess[] = [];
  beforeAll(async () => {
    // Every call billable, no rate limit: the meter must count exactly the 200s.
    const env = {
      ...rig.env,
      RATE_LIMIT_QR_GENERATE: '0',
      RATE_LIMIT_EMAIL_VERIFY_BATCH: '0',
      FREE_ALLOWANCE_QR_GENERATE: '0',
      FREE_ALLOWANCE_EMAIL_VERIFY_BATCH: '0',
    };
    server = await startServer('distributed', { workers: false, env });
    const workerEnv = { ...env, ...scenario.env, REDIS_URL: testRedisUrl(), REDIS_PREFIX: server.prefix, LOG_LEVEL: 'debug' };
    workers = await Promise.all(['A', 'B'].map((name) => startWorkerProcess(scenario.service, name, workerEnv)));
  });
  afterAll(async () => {
    await Promise.all(workers.map((worker) => worker.stop()));
    await server?.close();
  });

  it(
    `every job the killed worker held is taken over within ${scenario.budgetMs / 1000} s; no request lost, none billed twice`,
    { timeout: 60_000 },
    async () => {
      const [victim, survivor] = workers as [WorkerProcess, WorkerProcess];
      const traffic = load(scenario.concurrency, () => scenario.send(server));

      // Freeze the victim, and keep it frozen if Redis shows it holding jobs (their locks carry
      // its worker id), else let it go on and try again: then kill it, and what it held at that
      // moment dies with it. (QR jobs take well under a millisecond: freezing first is what
      // catches a worker in the middle of one.)
      let held: Held[] = [];
      let killedAt = 0;
      const deadline = Date.now() + 20_000;
      while (held.length === 0 && Date.now() < deadline) {
        signalGroup(victim.child.pid!, 'SIGSTOP');
        killedAt = Date.now();
        held = await jobsHeldBy(server.prefix, scenario.queue, victim.workerIds);
        if (held.length > 0) break;
        // Let it go on until it writes its next log line (it logs each job it starts and ends).
        const next = once(victim.child.stdout!, 'data');
        signalGroup(victim.child.pid!, 'SIGCONT');
        await next;
      }
      await victim.stop('SIGKILL');

      // The load goes on until every job the victim held has been started again by the survivor (its
      // log line read) and its request answered, or the budget and a margin have passed (the checks
      // below then say which was not).
      const takenOver = () =>
        held.every(
          (job) =>
            linesOf(survivor, 'job started').some((line) => line.jobId === job.jobId) &&
            traffic.answers.some((answer) => answer.requestId === job.requestId),
        );
      await waitUntil(takenOver, scenario.budgetMs + 3_000, 'the held jobs to be taken over and answered').catch(() => undefined);
      await traffic.stop();

      const answers = traffic.answers;
      const statuses = new Map<number, number>();
      for (const answer of answers) statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      const started = linesOf(survivor, 'job started');
      const takeovers = held.map((job) => {
        const taken = started.find((line) => line.jobId === job.jobId);
        const answer = answers.find((candidate) => candidate.requestId === job.requestId);
        return { ...job, takenMs: taken === undefined ? undefined : taken.time - killedAt, answeredMs: answer && answer.at - killedAt };
      });
      const stallLines = linesOf(survivor, 'job stalled');
      const stalls = stallLines.map((line) => String(line.jobId));
      // A false stall is a job of the live worker's back in the queue: one it had started before
      // the check found it stalled. Any other stalled job was the killed worker's, held or not at
      // the snapshot: a job it took by a command already sent when it froze is active in Redis a
      // moment after the snapshot, unseen by it (once, two stalls at the same check).
      const falseStalls = stallLines
        .filter((stall) => started.some((line) => line.jobId === stall.jobId && line.time < stall.time))
        .map((line) => String(line.jobId));
      const takenMs = takeovers.map((job) => job.takenMs ?? Infinity);
      console.log(
        `[crash-takeover] ${scenario.queue}: ${answers.length} requests (${[...statuses].map(([s, n]) => `${n}x${s}`).join(', ')}), ` +
          `killed worker held ${held.length} jobs; taken over after ${takenMs.join(', ')} ms (max ${Math.max(...takenMs)}), ` +
          `answered after ${takeovers.map((job) => job.answeredMs).join(', ')} ms; stalls seen ${stalls.length} ` +
          `(back in the queue after ${stallLines.map((line) => line.time - killedAt).join(', ')} ms), false stalls ${falseStalls.length}`,
      );

      expect(held.length).toBeGreaterThan(0);
      expect(statuses).toEqual(new Map([[200, answers.length]]));
      for (const job of takeovers) {
        expect(job.takenMs, `job ${job.jobId} taken over`).toBeLessThan(scenario.budgetMs);
        expect(job.answeredMs, `request ${job.requestId} answered`).toBeDefined();
      }
      expect(falseStalls).toEqual([]);

      const usage = (await call(server, '/v1/usage', { key: server.key })).json() as {
        operations: Record<string, { calls: number; billableCalls: number }>;
      };
      expect(usage.operations[scenario.operation]).toMatchObject({
        calls: answers.length,
        billableCalls: answers.length,
        freeRemaining: 0,
        costUsd: expect.any(String),
      });
    },
  );
});
