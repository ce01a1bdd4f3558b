/**
 * A list that waits says so, and finishes when asked: behind a greylisting server (451 until a
 * pair was seen 60 s before, longer than this test waits) a list goes `retrying`, and its object
 * says how many entries wait, why, when the next retry is and when the list should end, while its
 * settled results are downloadable; `POST .../finish` settles the waiting addresses as `risky`
 * with the reason they waited for, completes the list and sends its callback; a list that is not
 * retrying is answered as it is. Both modes, real gateway and scripted mail world.
 */
import { describe, expect, it } from 'vitest';
import { call, type Mode } from '../support/servers.ts';
import { createList, useListServer, useMailRig, waitForStatus, type ListObjectBody } from './harness.ts';

const mail = useMailRig({
  'slowgrey.test': { host: '127.0.0.54', users: ['ann@slowgrey.test'], greylist: { minDelayMs: 60_000 } },
  'open.test': { host: '127.0.0.55', users: ['bob@open.test'] },
});

describe.each<Mode>(['embedded', 'distributed'])('%s mode', (mode) => {
  const lists = useListServer(mode, () => ({
    ...mail.rig.env,
    LIST_RETRY_DELAYS_S: '30,30',
    VERIFY_BATCH_DEADLINE_MS: '5000',
    LIST_ALLOW_PRIVATE_CALLBACKS: 'true',
    RATE_LIMIT_EMAIL_VERIFY_LIST: '1000',
  }));

  it('says what waits and why; finish settles it risky with that reason and completes', async () => {
    const { server } = lists;
    const key = await server.freshKey();
    const emails = [`ann@slowgrey.test`, 'bob@open.test', 'ANN@slowgrey.test'];
    const created = (await createList(server, key, { emails, callbackUrl: 'https://hooks.example.com/finish' })).json() as ListObjectBody;
    const before = Date.now();
    const retrying = await waitForStatus(server, key, created.id, ['retrying'], 15_000);
    expect(retrying).toMatchObject({ processed: 1, waiting: 2, waitingReasons: { greylisted: 2 } });
    const next = Date.parse(retrying.nextRetryAt ?? '');
    expect(next).toBeGreaterThan(before + 20_000);
    expect(next).toBeLessThan(Date.now() + 31_000);
    // The last retry is 30 s after the first: the list should end about a minute from its first pass.
    expect(Date.parse(retrying.estimatedCompletionAt ?? '')).toBeGreaterThanOrEqual(next + 30_000);

    // The settled part is downloadable meanwhile.
    const partial = await call(server, `/v1/email-verify/lists/${created.id}/results?format=csv&columns=full`, { key });
    expect(partial.headers.get('x-list-pending')).toBe('2');
    expect(partial.text).toContain('bob@open.test,deliverable');

    const finished = await call(server, `/v1/email-verify/lists/${created.id}/finish`, { key, method: 'POST' });
    expect(finished.status, finished.text).toBe(200);
    const list = finished.json() as ListObjectBody;
    expect(list).toMatchObject({ status: 'completed', processed: 3, summary: { deliverable: 1, risky: 2, undeliverable: 0 } });
    expect(list.waiting).toBeUndefined();
    expect(list.estimatedCompletionAt).toBeUndefined();
    const results = (await call(server, `/v1/email-verify/lists/${created.id}/results`, { key })).json() as {
      pending: number;
      results: Array<{ email: string; verdict: string; reason: string }>;
    };
    expect(results.pending).toBe(0);
    expect(results.results.map((result) => [result.email, result.verdict, result.reason])).toEqual([
      ['ann@slowgrey.test', 'risky', 'greylisted'],
      ['bob@open.test', 'deliverable', 'accepted_email'],
      ['ANN@slowgrey.test', 'risky', 'greylisted'],
    ]);
    await expect
      .poll(() => server.dispatcher.events.filter((event) => event.body.includes(created.id)).map((event) => event.type), {
        timeout: 10_000,
      })
      .toEqual(['list.completed']);
    // Finished twice: answered as it is.
    const again = await call(server, `/v1/email-verify/lists/${created.id}/finish`, { key, method: 'POST' });
    expect(again.json()).toMatchObject({ status: 'completed', processed: 3 });
  }, 40_000);

  it('a list that is not retrying is answered as it is; another key’s list is not found', async () => {
    const { server } = lists;
    const key = await server.freshKey();
    const created = (await createList(server, key, { emails: ['broken'] })).json() as ListObjectBody;
    await waitForStatus(server, key, created.id, ['completed']);
    const finished = await call(server, `/v1/email-verify/lists/${created.id}/finish`, { key, method: 'POST' });
    expect(finished.json()).toMatchObject({ status: 'completed', processed: 1 });
    const other = await call(server, `/v1/email-verify/lists/${created.id}/finish`, { key: await server.freshKey(), method: 'POST' });
    expect(other.status).toBe(404);
  });
});
