/**
 * Greylisting resolved: behind a greylisting server (451 4.7.1 until a sender/recipient pair was
 * seen 3 s before) the batch route can only answer `risky`/`greylisted`; a list retries those
 * addresses on fresh connections after LIST_RETRY_DELAYS_S (here 2 s each; never on a parked
 * connection, even one parked for longer than that), shows `retrying`
 * meanwhile, and settles them for what they are: the mailbox that exists `deliverable`, the one
 * that does not `undeliverable`. With a single retry allowed, what is still greylisted settles
 * as `risky`.
 */
import { describe, expect, it } from 'vitest';
import { call, type Mode, postBatch } from '../support/servers.ts';
import {
  createList,
  getList,
  startListServer,
  useListServer,
  useMailRig,
  waitForStatus,
  type ListObjectBody,
  type ListServer,
  type ResultBody,
} from './harness.ts';

const mail = useMailRig({
  'grey.test': {
    host: '127.0.0.44',
    users: ['ann-embedded@grey.test', 'zed-embedded@grey.test', 'ann-distributed@grey.test', 'zed-distributed@grey.test'],
    greylist: { minDelayMs: 3_000 },
  },
});

async function results(server: ListServer, key: string, id: string): Promise<ResultBody[]> {
  return ((await call(server, `/v1/email-verify/lists/${id}/results`, { key })).json() as { results: ResultBody[] }).results;
}

describe.each<Mode>(['embedded', 'distributed'])('%s mode', (mode) => {
  const lists = useListServer(mode, () => ({
    ...mail.rig.env,
    LIST_RETRY_DELAYS_S: '2,2,2',
    VERIFY_BATCH_DEADLINE_MS: '5000',
    // Parked connections outlive the retry delay: a retry still goes out on a connection of its own.
    VERIFY_SMTP_SESSION_IDLE_MS: '10000',
  }));

  it('an address greylisted on the batch route ends deliverable in a list; a missing one undeliverable', async () => {
    const { server } = lists;
    const grey = mail.rig.servers['grey.test']!;
    const ann = `ann-${mode}@grey.test`;
    const zed = `zed-${mode}@grey.test`;
    const batch = await postBatch(server, server.key, [ann]);
    expect(batch.json()).toMatchObject({ results: [{ email: ann, verdict: 'risky', reason: 'greylisted' }] });

    const sessionsBefore = grey.sessions;
    const created = (
      await createList(server, server.key, { emails: [ann, `nobody-${mode}@grey.test`, zed, ann] })
    ).json() as ListObjectBody;
    const retrying = await waitForStatus(server, server.key, created.id, ['retrying'], 10_000);
    expect(retrying.processed).toBe(0);
    expect(retrying.completedAt).toBeNull();
    const done = await waitForStatus(server, server.key, created.id, ['completed'], 20_000);
    expect(done).toMatchObject({ processed: 4, summary: { deliverable: 3, risky: 0, undeliverable: 1 } });
    expect((await results(server, server.key, created.id)).map((result) => [result.email, result.verdict, result.reason])).toEqual([
      [ann, 'deliverable', 'accepted_email'],
      [`nobody-${mode}@grey.test`, 'undeliverable', 'rejected_email'],
      [zed, 'deliverable', 'accepted_email'],
      [ann, 'deliverable', 'accepted_email'],
    ]);
    // The first pass and at least one retry, each on a session of its own.
    expect(grey.sessions - sessionsBefore).toBeGreaterThanOrEqual(2);
  }, 40_000);

  it('what is still greylisted after the last retry settles as risky', async () => {
    const once = await startListServer(mode, { ...mail.rig.env, LIST_RETRY_DELAYS_S: '1', VERIFY_BATCH_DEADLINE_MS: '5000' });
    try {
      const list = (await createList(once, once.key, { emails: [`late-${mode}@grey.test`] })).json() as ListObjectBody;
      const done = await waitForStatus(once, once.key, list.id, ['completed'], 15_000);
      expect(done.summary).toEqual({ deliverable: 0, risky: 1, undeliverable: 0 });
      expect((await results(once, once.key, list.id))[0]).toMatchObject({ verdict: 'risky', reason: 'greylisted' });
      expect((await getList(once, once.key, list.id)).costUsd).toBe('0');
    } finally {
      await once.close();
    }
  }, 30_000);
});
