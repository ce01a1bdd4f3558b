/**
 * The answers' way back (reply-channel.ts), against a real Redis and real worker processes: a job
 * that crashed its worker too often still answers its request; an answer pushed while the
 * gateway is cut off from Redis reaches it once it is back; a second answer or a stray message
 * changes nothing; a job's data cannot make a worker write outside the inboxes; an inbox expires;
 * an answer's body travels after its JSON to a gateway that reads framed answers, and only to one.
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue, QueueEvents, type Worker } from 'bullmq';
import { ApiError } from '@svc/contracts';
import { createLogger } from '@svc/telemetry';
import { BullTransport, bullPrefix, REPLY_TTL_MS, startBullWorker } from '@svc/jobs/bullmq';
import { createRedis, type Redis } from '@svc/jobs/redis';
import { dropPrefix, spawnNode, startTcpProxy, stopProcessTree, testRedisUrl, uniquePrefix } from '@svc/testkit';
import { encodeReply, inboxKey, parseReply, type Reply } from '../src/reply-channel.ts';
import { JOB_PROTOCOL_VERSION } from '../src/job-protocol.ts';
import { ECHO_JOB, echoHandler, PAGE_JOB, pageHandler, type EchoPayload } from './fixtures/echo-job.ts';

const url = () => testRedisUrl();
const crashingWorker = fileURLToPath(new URL('./fixtures/crashing-worker.ts', import.meta.url));

const submit = (transport: BullTransport, payload: EchoPayload, deadlineMs = 10_000) =>
  transport.submit(ECHO_JOB, payload as never, { deadlineMs, requestId: 'req-reply' });

let redis: Redis;
beforeAll(() => void (redis = createRedis(url(), 'blocking', 'reply-channel-test')));
afterAll(() => redis.disconnect());

describe('bullmq answers through the gateway inbox', () => {
  it(
    'a job that crashed its worker more often than allowed answers its request internal_error (BullMQ fails it in the next worker, unrun)',
    { timeout: 60_000 },
    async () => {
      const prefix = uniquePrefix('poison');
      const transport = await BullTransport.create({ redis: url(), redisPrefix: prefix, kinds: [ECHO_JOB] });
      let survivor: Worker | undefined;
      let handled = 0;
      const counting = {
        ...echoHandler,
        handle: (payload: unknown, context: Parameters<typeof echoHandler.handle>[1]) => {
          handled += 1;
          return echoHandler.handle(payload, context);
        },
      };
      try {
        const answer = submit(transport, { value: 'poison' }, 40_000).then(
          () => undefined,
          (error: unknown) => error,
        );
        // Three workers take the job and die with it (SIGKILL): two stalls are retried
        // (MAX_STALLED_COUNT), the third marks the job failed for whoever fetches it next.
        for (let crash = 1; crash <= 3; crash += 1) {
          const child = spawnNode(crashingWorker, { args: [url(), prefix] });
          let output = '';
          child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
          try {
            await expect.poll(() => output.includes('took-job'), { timeout: 15_000 }).toBe(true);
          } finally {
            await stopProcessTree(child, { signal: 'SIGKILL' });
          }
        }
        survivor = startBullWorker(counting, { redis: url(), redisPrefix: prefix, concurrency: 1, takeoverMs: 2_000 });
        const started = Date.now();
        const error = await answer;
        expect(error).toBeInstanceOf(ApiError);
        expect((error as ApiError).code).toBe('internal_error');
        expect((error as ApiError).details).toEqual({ requestId: 'req-reply' });
        // Answered by the survivor's takeover (lock 0.6 s + checks every 0.25 s), not the 40 s deadline.
        expect(Date.now() - started).toBeLessThan(10_000);
        expect(handled).toBe(0);
        expect(transport.pending).toBe(0);
      } finally {
        await survivor?.close();
        await transport.close();
        await dropPrefix(url(), prefix);
      }
    },
  );

  it(
    'an answer pushed while the gateway is cut off from Redis waits in its inbox and reaches it once it is back',
    { timeout: 30_000 },
    async () => {
      const prefix = uniquePrefix('cut');
      const proxy = await startTcpProxy(url());
      const transport = await BullTransport.create({ redis: proxy.url, redisPrefix: prefix, kinds: [ECHO_JOB] });
      const worker = startBullWorker(echoHandler, { redis: url(), redisPrefix: prefix, concurrency: 1 });
      try {
        const answer = submit(transport, { value: 'away', delayMs: 600 });
        const queue = transport.queues()[0]!;
        await expect.poll(async () => (await queue.getJobCounts('active')).active, { timeout: 5_000 }).toBe(1);
        proxy.cut();
        // The worker answers while the gateway cannot read: the answer stays in the inbox.
        await expect.poll(async () => redis.llen(transport.inboxKey), { timeout: 5_000 }).toBe(1);
        proxy.restore();
        await expect(answer).resolves.toEqual({ value: 'AWAY' });
        expect(await redis.exists(transport.inboxKey)).toBe(0);
      } finally {
        proxy.restore();
        await worker.close();
        await transport.close();
        await proxy.close();
        await dropPrefix(url(), prefix);
      }
    },
  );

  it('a second answer of a job, or a message that is no answer, is dropped, and the inbox goes on', async () => {
    const prefix = uniquePrefix('twice');
    let logged = '';
    const logger = createLogger('info', 'reply-test', { write: (line: string) => void (logged += line) });
    const transport = await BullTransport.create({ redis: url(), redisPrefix: prefix, kinds: [ECHO_JOB], logger });
    const worker = startBullWorker(echoHandler, { redis: url(), redisPrefix: prefix, concurrency: 2 });
    try {
      const answered: string[] = [];
      worker.on('completed', (job) => answered.push(job.id!));
      await expect(submit(transport, { value: 'first' })).resolves.toEqual({ value: 'FIRST' });
      expect(logged).not.toMatch(/not a job answer/);
      // What a job run again after its worker lost the lock sends: a second answer of that job.
      await redis.lpush(transport.inboxKey, JSON.stringify({ jobId: answered[0], ok: true, result: { value: 'again' } }));
      await redis.lpush(transport.inboxKey, 'not json', JSON.stringify({ jobId: 'x', ok: 'maybe' }));
      await expect(submit(transport, { value: 'second' })).resolves.toEqual({ value: 'SECOND' });
      await expect.poll(async () => redis.exists(transport.inboxKey)).toBe(0);
      expect(transport.pending).toBe(0);
      // The two stray messages are reported (one line: the log is rate-limited per kind), the answers never.
      expect(logged.match(/not a job answer/g)).toHaveLength(1);
    } finally {
      await worker.close();
      await transport.close();
      await dropPrefix(url(), prefix);
    }
  });

  it('a worker answers only into an inbox: a job naming another key as its reply address is run, and that key left alone', async () => {
    const prefix = uniquePrefix('foreign');
    const queue = new Queue('echo', { connection: { url: url() }, prefix: bullPrefix(prefix, 'echo') });
    const events = new QueueEvents('echo', { connection: { url: url() }, prefix: bullPrefix(prefix, 'echo') });
    await events.waitUntilReady();
    const worker = startBullWorker(echoHandler, { redis: url(), redisPrefix: prefix, concurrency: 1 });
    try {
      const victim = `${prefix}:keys:victim`;
      const completed = new Promise<unknown>((resolve) => events.on('completed', ({ returnvalue }) => resolve(returnvalue)));
      await queue.add(
        'echo',
        { payload: { value: 'x' }, deadlineAt: Date.now() + 10_000, requestId: 'r', replyTo: victim },
        { jobId: 'j1' },
      );
      // No inbox to answer to: the result stays in the completed event, as for a gateway of an earlier release.
      await expect(completed).resolves.toEqual({ value: 'X' });
      expect(await redis.exists(victim)).toBe(0);
    } finally {
      await worker.close();
      await events.close();
      await queue.close();
      await dropPrefix(url(), prefix);
    }
  });

  it('an inbox no gateway reads expires REPLY_TTL_MS after its last answer', async () => {
    const prefix = uniquePrefix('expiry');
    const transport = await BullTransport.create({ redis: url(), redisPrefix: prefix, kinds: [ECHO_JOB] });
    const inbox = transport.inboxKey;
    await transport.close(); // the gateway is gone; its job is still queued
    const worker = startBullWorker(echoHandler, { redis: url(), redisPrefix: prefix, concurrency: 1 });
    const queue = new Queue('echo', { connection: { url: url() }, prefix: bullPrefix(prefix, 'echo') });
    try {
      await queue.add(
        'echo',
        { payload: { value: 'orphan' }, deadlineAt: Date.now() + 10_000, requestId: 'r', replyTo: inbox },
        { jobId: 'o1' },
      );
      await expect.poll(async () => redis.llen(inbox), { timeout: 5_000 }).toBe(1);
      const ttl = await redis.pttl(inbox);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(REPLY_TTL_MS);
    } finally {
      await worker.close();
      await queue.close();
      await dropPrefix(url(), prefix);
    }
  });
});

/** Bodies a framed answer must carry as they are: quotes, newlines (the header ends at the first), the frame's mark, non-ASCII. */
const AWKWARD_BODIES = ['', 'B', '\n', '{"jobId":"x"}\n\n', '<svg a="1">\\n</svg>', 'é ✓ 𝄞 \u0000 \u2028', 'x'.repeat(70_000)];

describe('framed answers (a body after its JSON)', () => {
  it('carry every body as it is, and leave answers without a body, failures and unframed answers in plain JSON', () => {
    for (const body of AWKWARD_BODIES) {
      const reply: Reply = { jobId: 'j', ok: true, result: { contentType: 'text/plain', body, version: 3 } };
      const framed = encodeReply(reply, true);
      expect(framed.startsWith('B{')).toBe(true);
      expect(framed.endsWith(`\n${body}`)).toBe(true);
      expect(parseReply(framed)).toEqual(reply);
      const plain = encodeReply(reply, false);
      expect(plain).toBe(JSON.stringify(reply));
      expect(parseReply(plain)).toEqual(reply);
    }
    const noBody: Reply = { jobId: 'j', ok: true, result: { value: 'V' } };
    const numberBody: Reply = { jobId: 'j', ok: true, result: { body: 3 } };
    const failed: Reply = { jobId: 'j', ok: false, reason: 'handler bug' };
    for (const reply of [noBody, numberBody, failed, { jobId: 'j', ok: true, result: null } satisfies Reply])
      expect(encodeReply(reply, true)).toBe(JSON.stringify(reply));
  });

  it('that break their frame are no answer', () => {
    for (const message of [
      'B',
      'B{"jobId":"j","ok":true,"result":{}}',
      'Bnot json\nbody',
      'B{"jobId":"j","ok":false,"reason":"r"}\nbody',
      'B{"jobId":"j","ok":true,"result":"text"}\nbody',
      'B{"jobId":"j","ok":true,"result":null}\nbody',
      'B{"ok":true,"result":{}}\nbody',
    ])
      expect(parseReply(message), message).toBeUndefined();
  });

  it('go only to a gateway that said it reads them: a job without the flag (an earlier release) is answered in plain JSON', async () => {
    const prefix = uniquePrefix('framing');
    const queue = new Queue('page', { connection: { url: url() }, prefix: bullPrefix(prefix, 'page') });
    const worker = startBullWorker(pageHandler, { redis: url(), redisPrefix: prefix, concurrency: 1 });
    const inbox = inboxKey(prefix, randomUUID());
    try {
      const job = (id: string, framedReplies?: boolean) => ({
        payload: { value: '<svg fill="#000">\n</svg>' },
        deadlineAt: Date.now() + 10_000,
        requestId: id,
        replyTo: inbox,
        ...(framedReplies === undefined ? {} : { framedReplies }),
      });
      await queue.add('page', job('old'), { jobId: 'old' });
      await expect.poll(async () => redis.llen(inbox), { timeout: 5_000 }).toBe(1);
      await queue.add('page', job('new', true), { jobId: 'new' });
      await expect.poll(async () => redis.llen(inbox), { timeout: 5_000 }).toBe(2);
      // A bundle says it once for its jobs (job-bundles.ts).
      const { payload, deadlineAt } = job('bundle');
      const bundle = { bundle: ['b1', 'b2'].map((replyId) => ({ replyId, payload, deadlineAt, requestId: replyId })) };
      await queue.add('page', { ...bundle, deadlineAt, requestId: 'b1', replyTo: inbox, framedReplies: true }, { jobId: 'bundle' });
      await expect.poll(async () => redis.llen(inbox), { timeout: 5_000 }).toBe(4);
      const [bundled2, bundled1, framed, plain] = await redis.lrange(inbox, 0, -1);
      const result = { contentType: 'text/plain', body: '<svg fill="#000">\n</svg>' };
      expect(plain).toBe(JSON.stringify({ v: JOB_PROTOCOL_VERSION, jobId: 'old', ok: true, result }));
      const frame = (jobId: string) =>
        `B${JSON.stringify({ v: JOB_PROTOCOL_VERSION, jobId, ok: true, result: { contentType: 'text/plain' } })}\n${result.body}`;
      expect([framed, bundled1, bundled2]).toEqual([frame('new'), frame('b1'), frame('b2')]);
    } finally {
      await worker.close();
      await queue.close();
      await dropPrefix(url(), prefix);
    }
  });

  it('reach the gateway whole', async () => {
    const prefix = uniquePrefix('framed');
    const transport = await BullTransport.create({ redis: url(), redisPrefix: prefix, kinds: [PAGE_JOB] });
    const worker = startBullWorker(pageHandler, { redis: url(), redisPrefix: prefix, concurrency: 4 });
    try {
      const answers = await Promise.all(
        AWKWARD_BODIES.map((value) =>
          transport.submit(PAGE_JOB, { value, delayMs: 0, fail: false, badResult: false }, { deadlineMs: 10_000, requestId: 'req-page' }),
        ),
      );
      expect(answers).toEqual(AWKWARD_BODIES.map((body) => ({ contentType: 'text/plain', body })));
    } finally {
      await worker.close();
      await transport.close();
      await dropPrefix(url(), prefix);
    }
  });
});
