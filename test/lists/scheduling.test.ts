/**
 * Batches first. A big list keeps a slow mail server busy (one RCPT at a time, 40 ms each: a
 * chunk's session takes over 4 s); a batch to the same server sent meanwhile is answered about as
 * fast as with the server idle, because lists never take the last of the server's slots and
 * never start a session while a batch waits. Sessions to the server never exceed
 * VERIFY_MAX_CONNECTIONS_PER_HOST (2), batches and list together.
 *
 * The bound below (3 s) sits well under one list session, the least a batch queued behind the
 * list would wait; the batch alone takes about half a second.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type Mode, postBatch } from '../support/servers.ts';
import { createList, getList, startListServer, startMultiRig, type ListObjectBody, type ListServer, type MultiRig } from './harness.ts';

let rig: MultiRig;
beforeAll(async () => {
  rig = await startMultiRig({
    'busy.test': { host: '127.0.0.46', users: [], pipelining: false, replyDelayMs: 40 },
  });
});
afterAll(async () => rig?.close());

async function timedBatch(server: ListServer, emails: string[]): Promise<number> {
  const started = performance.now();
  const response = await postBatch(server, server.key, emails);
  expect(response.status).toBe(200);
  return performance.now() - started;
}

describe.each<Mode>(['embedded', 'distributed'])('%s mode', (mode) => {
  let server: ListServer;
  beforeAll(async () => {
    server = await startListServer(mode, {
      ...rig.env,
      VERIFY_MAX_CONNECTIONS_PER_HOST: '2',
      LIST_WORKER_CONCURRENCY: '2',
      VERIFY_BATCH_DEADLINE_MS: '30000',
    });
  });
  afterAll(async () => server?.close());

  it('a batch keeps its latency while a big list works the same mail server', async () => {
    const busy = rig.servers['busy.test']!;
    const batchOf = (tag: string) => Array.from({ length: 10 }, (_, i) => `${tag}-${mode}-${i}@busy.test`);
    // The mail server is shared by both modes: the embedded run's last sessions (idle ones wait
    // VERIFY_SMTP_SESSION_IDLE_MS, then QUIT) must be gone before this mode's are counted.
    await expect.poll(() => busy.open, { timeout: 10_000 }).toBe(0);
    const alone = await timedBatch(server, batchOf('alone'));

    const emails = Array.from({ length: 600 }, (_, i) => `member-${mode}-${i}@busy.test`);
    const answeredBefore = busy.rcptAnswered;
    const list = (await createList(server, server.key, { emails })).json() as ListObjectBody;
    // Well into a list session: its recipients are being asked.
    await expect.poll(() => busy.open > 0 && busy.rcptAnswered > answeredBefore, { timeout: 10_000, interval: 20 }).toBe(true);

    const during = await timedBatch(server, batchOf('during'));
    const state = await getList(server, server.key, list.id);
    expect(state.status).toBe('running');
    expect(state.processed).toBeLessThan(600);
    expect(during).toBeLessThan(3_000);
    expect(during).toBeLessThan(alone + 2_500);
    expect(busy.maxOpen).toBeLessThanOrEqual(2);

    await call(server, `/v1/email-verify/lists/${list.id}`, { key: server.key, method: 'DELETE' });
  }, 40_000);
});
