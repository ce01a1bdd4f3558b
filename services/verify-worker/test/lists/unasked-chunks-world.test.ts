/**
 * A list's chunks queue for the one session slot of their mail server; a chunk whose deadline
 * comes while it waits was never asked about its addresses. Those are passed again at once, in
 * the same round (processor.ts `verifyChunk`), not given a retry mark 60 s away
 * (LIST_RETRY_DELAYS_S) that uses up a retry round: the list completes as soon as the server
 * has answered every address, with each one's real verdict. The engine tells them apart
 * (`unasked`) from addresses a session carried before the deadline cut it, which stay plain
 * timeouts; a batch answers both as `risky`/`timeout` within its deadline as before.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { Registry } from 'prom-client';
import { loadConfig } from '@svc/config';
import { MemoryListQueue, MemoryListStore } from '@svc/lists';
import { MemoryMeter } from '@svc/metering';
import { createVerifier, startVerifyProcess } from '../../src/handler.ts';
import { LocalPriorityLimiter } from '../../src/engine/shared-host-limiter.ts';
import { listProcessorOn } from '../../src/lists/assemble.ts';
import { FAST_TUNING, mailDomain, useWorld } from '../engine/world.ts';
import { runUntilCompleted, storeAddressList } from './stored-list.ts';

const KNOWN = (k: number) => k % 10 < 7;
const CHUNKS = 4;
const PER_CHUNK = 50;
const world = useWorld(
  { ...mailDomain('crowd.test', '127.0.0.241'), ...mailDomain('slow.test', '127.0.0.242') },
  {
    // One RCPT at a time, 200 ms each: a session the deadline cuts has asked some of its recipients.
    '127.0.0.242': { users: ['u1@slow.test', 'postmaster@slow.test'], replyDelayMs: 200, bannerDelayMs: 0, pipelining: false },
    // Each session spends about a second in its greeting, then answers its RCPTs (pipelined) at
    // once: a chunk holds the one connection ~1 s, and the deadline cuts a session in its greeting.
    '127.0.0.241': {
      users: [
        ...Array.from({ length: CHUNKS * PER_CHUNK }, (_, k) => k)
          .filter(KNOWN)
          .map((k) => `u${k}@crowd.test`),
        'postmaster@crowd.test',
      ],
      bannerDelayMs: 1_000,
      replyDelayMs: 0,
    },
  },
);

const env = (deadlineMs: number) =>
  world.env({
    VERIFY_CONNECT_TIMEOUT_MS: '2000',
    VERIFY_COMMAND_TIMEOUT_MS: '2000',
    VERIFY_BATCH_DEADLINE_MS: String(deadlineMs),
    VERIFY_MAX_CONNECTIONS_PER_HOST: '1',
    // No parked connection: each session pays the greeting (holds the slot ~1 s at crowd.test).
    VERIFY_SMTP_SESSION_IDLE_MS: '0',
  });

describe('the engine says which addresses no server was asked about', () => {
  it('waited for the slot until the deadline: a timeout as before, marked unasked; answered or cut mid-RCPT: not', async () => {
    const config = loadConfig(env(5_000));
    const verifier = createVerifier({
      config,
      registry: new Registry(),
      limiter: new LocalPriorityLimiter(1).for('batch'),
      tuning: FAST_TUNING,
    });
    const call = (ms: number) => ({ deadlineAt: Date.now() + ms, signal: new AbortController().signal });
    // The first holds the one connection about a second; the second's deadline comes meanwhile.
    const [first, second, cut] = await Promise.all([
      verifier.verifyDetailed(['u1@crowd.test', 'u9@crowd.test'], call(3_000)),
      new Promise((resolve) => setTimeout(resolve, 50)).then(() => verifier.verifyDetailed(['u2@crowd.test'], call(700))),
      verifier.verifyDetailed(['u1@slow.test', 'u2@slow.test', 'u3@slow.test', 'u4@slow.test'], call(1_000)),
    ]);
    expect(first.map(({ result, unasked }) => [result.reason, unasked])).toEqual([
      ['accepted_email', undefined],
      ['rejected_email', undefined],
    ]);
    expect(second.map(({ result, temporary, unasked }) => [result.verdict, result.reason, temporary, unasked])).toEqual([
      ['risky', 'timeout', true, true],
    ]);
    // EHLO, MAIL and the control's RCPT answered by ~600 ms; the deadline (750 ms) cut the session
    // in its RCPTs: those it carried were asked, a plain timeout (a retry round for a list).
    expect(cut.map(({ result, unasked }) => [result.reason, unasked])).toEqual(cut.map(() => ['timeout', undefined]));
  });
});

describe('list chunks queued behind their siblings at one mail server', () => {
  it('addresses never asked before the deadline are asked again at once: no retry round, every real verdict', async () => {
    // A chunk's pass: 2.35 s of probing (the engine keeps 250 ms to answer). Four chunks of ~1 s
    // sessions on one connection: the third is cut in its greeting, the fourth never has the slot.
    const config = loadConfig(env(2_600));
    const shared = startVerifyProcess(config, { registry: new Registry() });
    onTestFinished(() => shared.sight.stop());
    const limiter = new LocalPriorityLimiter(1);
    const verifier = createVerifier({ config, process: shared, limiter: limiter.for('list'), priority: 'list', tuning: FAST_TUNING });
    const store = new MemoryListStore();
    const queue = new MemoryListQueue({ concurrency: CHUNKS });
    const processor = listProcessorOn(verifier, { config, store, queue, meter: new MemoryMeter() });
    const server = world.smtp.get('127.0.0.241')!;
    const id = 'lst_0000000000000000000000ua';
    const { items, jobs } = await storeAddressList(
      store,
      id,
      Array.from({ length: CHUNKS * PER_CHUNK }, (_, i) => `u${i}@crowd.test`),
      PER_CHUNK,
    );
    let waiting = 0;
    // Before the fix the last chunks' addresses waited for their retry, 60 s away.
    const { statuses, tookMs } = await runUntilCompleted({ store, id, jobs }, queue, processor.handle, 20_000, (list) => {
      waiting = Math.max(waiting, ...Object.values(list?.waiting?.byReason ?? {}));
    });
    const results = await store.results(
      id,
      items.map(([i]) => i),
    );
    expect(results.map((result) => result?.result.reason)).toEqual(items.map(([i]) => (KNOWN(i) ? 'accepted_email' : 'rejected_email')));
    // No retry round was used: nothing ever waited for one.
    expect(statuses.has('retrying')).toBe(false);
    expect(waiting).toBe(0);
    // The chunks did queue for the one connection past a deadline (else this proves nothing): a
    // session was cut in its greeting (a connection more than the chunks), and the list took
    // longer than one pass.
    expect(server.connections).toBeGreaterThan(CHUNKS);
    expect(tookMs).toBeGreaterThan(2_600);
  }, 60_000);
});
