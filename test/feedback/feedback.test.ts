/**
 * Learning from sends end to end, in both modes, on real sockets: a mail rig with a catch-all
 * domain (every RCPT accepted, the test knows which mailboxes are real) and a plain one; feedback
 * through every door (generic JSON, SendGrid signed, Mailgun signed, Postmark with the key as a
 * Basic password, SES through SNS with its subscription confirmed); later verifications (batch,
 * single, list) answer known_bounce without any RCPT for those addresses, complainer,
 * known_delivery, a probability for the rest; another key sees nothing; history pages; refused
 * signatures; and Redis holds no address under the feedback keys.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '@svc/gateway';
import { testRedisUrl, waitUntil } from '@svc/testkit';
import {
  mailgunBody,
  postmarkBounce,
  postmarkSpamComplaint,
  sendgridEvents,
  sendgridKeyPair,
  sendgridSignature,
  sesBounce,
  sesDelivery,
  snsNotification,
  snsSubscriptionConfirmation,
} from '@svc/testkit/feedback-bodies';
import { connect } from '../mcp/mcp-client.ts';
import { call, postBatch, startServer, type Mode, type TestServer } from '../support/servers.ts';
import { rcptCounts, startListServer, startMultiRig, type ListServer, type MultiRig } from '../lists/harness.ts';

const MAILGUN_KEY = 'mailgun-webhook-signing-key-for-tests';
const sendgrid = sendgridKeyPair();
const DAY = 86_400_000;

let rig: MultiRig;
let sns: Server;
const snsVisits: string[] = [];
beforeAll(async () => {
  rig = await startMultiRig({
    'accept.test': { host: '127.0.0.71', catchAll: true },
    'plain.test': { host: '127.0.0.72', users: ['ann@plain.test'] },
  });
  sns = createServer((request, response) => {
    snsVisits.push(request.url ?? '');
    response.end('<ConfirmSubscriptionResponse/>');
  });
  await new Promise<void>((resolve) => sns.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  await rig?.close();
  await new Promise((resolve) => sns?.close(resolve));
});

interface Result {
  email: string;
  verdict: string;
  reason: string;
  score: number;
  probability?: number;
  checks: { catchAll: boolean | null; history?: { bounces: number; deliveries: number; complaints: number; lastEventAt: string } | null };
}

const basic = (key: string) => `Basic ${Buffer.from(`any:${key}`).toString('base64')}`;

function post(server: Pick<TestServer, 'baseUrl'>, path: string, body: unknown, headers: Record<string, string>) {
  return call(server, path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

describe.each<Mode>(['embedded', 'distributed'])('%s mode', (mode) => {
  let server: TestServer;
  let otherKey: string;
  const at = (daysAgo: number) => new Date(Date.now() - daysAgo * DAY);
  const address = (name: string) => `${name}-${mode}@accept.test`;
  beforeAll(async () => {
    server = await startServer(mode, {
      env: {
        ...rig.env,
        FEEDBACK_MAILGUN_SIGNING_KEY: MAILGUN_KEY,
        FEEDBACK_SENDGRID_PUBLIC_KEY: sendgrid.publicKeyBase64,
        LIST_ALLOW_PRIVATE_CALLBACKS: 'true',
        VERIFY_BATCH_DEADLINE_MS: '8000',
      },
    });
    otherKey = generateApiKey();
    await server.keys.create('other', otherKey);
  });
  afterAll(async () => server?.close());

  it('takes feedback through every door', async () => {
    const auth = { authorization: `Bearer ${server.key}` };
    const generic = await post(
      server,
      '/v1/email-verify/feedback',
      {
        events: [
          { email: address('gone1'), outcome: 'hard_bounce', at: at(1).toISOString(), detail: '550 5.1.1 user unknown' },
          { email: address('soft'), outcome: 'soft_bounce' },
          { email: 'not an address', outcome: 'delivered' },
        ],
      },
      auth,
    );
    expect(generic.status).toBe(200);
    expect(generic.json()).toEqual({ accepted: 2, ignored: 1 });

    // SendGrid: the key as Basic password, the body signed; deliveries make the domain look good.
    const delivered = Array.from({ length: 12 }, (_, i) => ({ email: address(`real${i}`), event: 'delivered' as const }));
    const raw = JSON.stringify(
      sendgridEvents([{ email: address('gone2'), event: 'bounce' }, { email: address('x'), event: 'open' }, ...delivered], at(4)),
    );
    const timestamp = String(Math.floor(Date.now() / 1000));
    const signed = await post(server, '/v1/email-verify/feedback/sendgrid', raw, {
      authorization: basic(server.key),
      ...sendgridSignature(sendgrid.privateKey, raw, timestamp),
    });
    expect(signed.status).toBe(200);
    expect(signed.json()).toEqual({ accepted: 13, ignored: 1 });

    const mailgun = await post(server, '/v1/email-verify/feedback/mailgun', mailgunBody(MAILGUN_KEY, address('gone3'), 'failed', at(1)), {
      authorization: basic(server.key),
    });
    expect(mailgun.json()).toEqual({ accepted: 1, ignored: 0 });

    const postmark = await post(server, '/v1/email-verify/feedback/postmark', postmarkBounce(address('gone4'), at(1)), {
      authorization: basic(server.key),
    });
    expect(postmark.json()).toEqual({ accepted: 1, ignored: 0 });
    const complaint = await post(server, '/v1/email-verify/feedback/postmark', postmarkSpamComplaint(address('angry'), at(1)), auth);
    expect(complaint.json()).toEqual({ accepted: 1, ignored: 0 });

    // SES through SNS: text/plain bodies; the subscription is confirmed by visiting SubscribeURL.
    const { port } = sns.address() as AddressInfo;
    const snsHeaders = {
      authorization: basic(server.key),
      'content-type': 'text/plain; charset=UTF-8',
      'x-amz-sns-message-type': 'Notification',
    };
    const confirm = await post(
      server,
      '/v1/email-verify/feedback/ses',
      snsSubscriptionConfirmation(`http://127.0.0.1:${port}/confirm-${mode}?Token=abc`, at(0)),
      snsHeaders,
    );
    expect(confirm.status).toBe(200);
    expect(snsVisits).toContain(`/confirm-${mode}?Token=abc`);
    const bounce = await post(
      server,
      '/v1/email-verify/feedback/ses',
      snsNotification(sesBounce([address('gone5')], at(1)), at(1)),
      snsHeaders,
    );
    expect(bounce.json()).toEqual({ accepted: 1, ignored: 0 });
    const delivery = await post(
      server,
      '/v1/email-verify/feedback/ses',
      snsNotification(sesDelivery([address('known')], at(4)), at(4)),
      snsHeaders,
    );
    expect(delivery.json()).toEqual({ accepted: 1, ignored: 0 });
  });

  it('refuses unsigned or wrongly signed bodies, unknown sources and bad keys', async () => {
    const auth = { authorization: basic(server.key) };
    const wrong = await post(
      server,
      '/v1/email-verify/feedback/mailgun',
      mailgunBody('another-key', address('forged'), 'failed', at(0)),
      auth,
    );
    expect(wrong.status).toBe(401);
    expect(wrong.json()).toMatchObject({ error: 'unauthorized', message: expect.stringMatching(/signature did not match/) });
    const raw = JSON.stringify(sendgridEvents([{ email: address('forged'), event: 'bounce' }], at(0)));
    expect((await post(server, '/v1/email-verify/feedback/sendgrid', raw, auth)).status).toBe(401);
    const tampered = await post(server, '/v1/email-verify/feedback/sendgrid', raw.replace('forged', 'forgeD'), {
      ...auth,
      ...sendgridSignature(sendgrid.privateKey, raw, '1764900000'),
    });
    expect(tampered.status).toBe(401);
    expect((await post(server, '/v1/email-verify/feedback/sparkpost', [], auth)).status).toBe(404);
    expect(
      (
        await post(server, '/v1/email-verify/feedback/postmark', postmarkBounce(address('forged'), at(0)), {
          authorization: basic('sk_wrong'),
        })
      ).status,
    ).toBe(401);
    expect((await post(server, '/v1/email-verify/feedback/postmark', { Email: 'x' }, auth)).status).toBe(400);
  });

  it('answers later verifications from the feedback, with no RCPT for known bounces', async () => {
    const smtp = rig.servers['accept.test']!;
    const gone = ['gone1', 'gone2', 'gone3', 'gone4', 'gone5'].map(address);
    const before = rcptCounts(smtp);
    const batch = await postBatch(server, server.key, [
      ...gone,
      address('angry'),
      address('known'),
      address('fresh'),
      address('soft'),
      'ann@plain.test',
    ]);
    expect(batch.status).toBe(200);
    const results = (batch.json() as { results: Result[] }).results;
    const after = rcptCounts(smtp);
    for (const email of gone) {
      expect(results.find((result) => result.email === email)).toMatchObject({
        verdict: 'undeliverable',
        reason: 'known_bounce',
        checks: { history: { bounces: 1 } },
      });
      expect(after.get(email) ?? 0).toBe(before.get(email) ?? 0);
    }
    const byEmail = (email: string) => results.find((result) => result.email === email)!;
    expect(byEmail(address('angry'))).toMatchObject({ verdict: 'risky', reason: 'complainer', checks: { history: { complaints: 1 } } });
    expect(byEmail(address('known'))).toMatchObject({
      verdict: 'deliverable',
      reason: 'known_delivery',
      checks: { history: { deliveries: 1 } },
    });
    const fresh = byEmail(address('fresh'));
    expect(fresh).toMatchObject({ verdict: 'risky', reason: 'accept_all', checks: { catchAll: true, history: null } });
    // 13 deliveries, 5 bounces at the domain: above the prior's 0.75 is not required, but well above an even chance.
    expect(fresh.probability).toBeGreaterThan(0.6);
    expect(fresh.score).toBeGreaterThan(55);
    expect(byEmail(address('soft'))).toMatchObject({ reason: 'accept_all', checks: { history: { bounces: 0, deliveries: 0 } } });
    expect(byEmail('ann@plain.test')).toMatchObject({ verdict: 'deliverable', reason: 'accepted_email', checks: { history: null } });
    expect(after.get(address('fresh')) ?? 0).toBeGreaterThan(before.get(address('fresh')) ?? 0);

    const single = await call(server, `/v1/email-verify/verify?email=${encodeURIComponent(address('GONE1').replace('GONE1', 'Gone1'))}`, {
      key: server.key,
    });
    expect(single.json()).toMatchObject({ verdict: 'undeliverable', reason: 'known_bounce' });
  });

  it('takes feedback by the email-verify_feedback tool', async () => {
    const tools = await connect(server, 'email-verify');
    try {
      const listed = await tools.client.listTools();
      expect(listed.tools.map((tool) => tool.name)).toContain('email-verify_feedback');
      const reported = await tools.callTool('email-verify_feedback', {
        events: [
          { email: address('tool-gone'), outcome: 'hard_bounce' },
          { email: 'x', outcome: 'delivered' },
        ],
      });
      expect(reported.isError).toBeFalsy();
      expect(reported.structuredContent).toEqual({ accepted: 1, ignored: 1 });
      const refused = await tools.callTool('email-verify_feedback', { events: [{ email: address('tool-gone'), outcome: 'bounced' }] });
      expect(refused.isError).toBe(true);
      const verified = await tools.callTool('email-verify_verify', { email: address('tool-gone') });
      expect(verified.structuredContent).toMatchObject({ verdict: 'undeliverable', reason: 'known_bounce' });
    } finally {
      await tools.close();
    }
  });

  it('keeps feedback to the key that reported it', async () => {
    const batch = await postBatch(server, otherKey, [address('gone1'), address('angry')]);
    const results = (batch.json() as { results: Result[] }).results;
    expect(results.map((result) => result.reason)).toEqual(['accept_all', 'accept_all']);
    expect(results.every((result) => result.checks.history === null && result.probability === 0.75)).toBe(true);
    const history = await call(server, `/v1/email-verify/history?email=${encodeURIComponent(address('gone1'))}`, { key: otherKey });
    expect((history.json() as { events: unknown[] }).events).toEqual([]);
  });

  it('pages the history of an address, newest first', async () => {
    await postBatch(server, server.key, [address('gone1')]);
    const path = `/v1/email-verify/history?email=${encodeURIComponent(address('gone1'))}`;
    const full = (await call(server, path, { key: server.key })).json() as {
      email: string;
      verifications: Array<{ at: string; reason: string }>;
      events: Array<{ outcome: string; source: string }>;
    };
    expect(full.email).toBe(address('gone1'));
    expect(full.events).toEqual([{ at: at(1).toISOString().slice(0, 10) && expect.any(String), outcome: 'hard_bounce', source: 'api' }]);
    expect(full.verifications.length).toBeGreaterThanOrEqual(2);
    expect(full.verifications.every((entry) => entry.reason === 'known_bounce')).toBe(true);
    const first = (await call(server, `${path}&limit=1`, { key: server.key })).json() as typeof full;
    expect(first.verifications).toEqual([full.verifications[0]]);
    const next = (
      await call(server, `${path}&limit=1&before=${encodeURIComponent(first.verifications[0]!.at)}`, { key: server.key })
    ).json() as typeof full;
    expect(next.verifications).toEqual([full.verifications[1]]);
    expect((await call(server, '/v1/email-verify/history?email=nope', { key: server.key })).status).toBe(400);
  });

  if (mode === 'distributed')
    it('holds no address in Redis under the feedback keys', async () => {
      const redis = new Redis(testRedisUrl());
      try {
        const keys: string[] = [];
        let cursor = '0';
        do {
          const [next, found] = await redis.scan(cursor, 'MATCH', `${server.prefix}:fb:*`, 'COUNT', 1_000);
          cursor = next;
          keys.push(...found);
        } while (cursor !== '0');
        expect(keys.length).toBeGreaterThan(20);
        const plain = /accept\.test|plain\.test|gone\d|angry|known-|real\d/i;
        for (const key of keys) {
          expect(key).not.toMatch(plain);
          const type = await redis.type(key);
          const values =
            type === 'hash'
              ? Object.entries(await redis.hgetall(key)).flat()
              : type === 'list'
                ? await redis.lrange(key, 0, -1)
                : [String(await redis.get(key))];
          for (const value of values) expect(value).not.toMatch(plain);
        }
      } finally {
        redis.disconnect();
      }
    });
});

describe.each<Mode>(['embedded', 'distributed'])('%s mode, lists', (mode) => {
  let server: ListServer;
  beforeAll(async () => {
    server = await startListServer(mode, rig.env);
  });
  afterAll(async () => server?.close());

  it('answers a list from the feedback too', async () => {
    const gone = `list-gone-${mode}@accept.test`;
    const reported = await post(
      server,
      '/v1/email-verify/feedback',
      { events: [{ email: gone, outcome: 'hard_bounce' }] },
      { authorization: `Bearer ${server.key}` },
    );
    expect(reported.json()).toEqual({ accepted: 1, ignored: 0 });
    const before = rcptCounts(rig.servers['accept.test']!).get(gone) ?? 0;
    const created = await call(server, '/v1/email-verify/lists', {
      key: server.key,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ emails: [gone, `list-fresh-${mode}@accept.test`] }),
    });
    expect(created.status).toBe(202);
    const id = (created.json() as { id: string }).id;
    await waitUntil(
      async () =>
        ((await call(server, `/v1/email-verify/lists/${id}`, { key: server.key })).json() as { status: string }).status === 'completed',
      20_000,
      'the list to complete',
    );
    const results = ((await call(server, `/v1/email-verify/lists/${id}/results`, { key: server.key })).json() as { results: Result[] })
      .results;
    expect(results.map((result) => result.reason)).toEqual(['known_bounce', 'accept_all']);
    // The domain's one bounce, shrunk towards the prior (no catch-all domain of the key yet): 7.5 / 11.
    expect(results[1]?.probability).toBe(0.68);
    expect(rcptCounts(rig.servers['accept.test']!).get(gone) ?? 0).toBe(before);
  });
});

describe('retention', () => {
  it('forgets events after HISTORY_RETENTION_DAYS', async () => {
    const server = await startServer('embedded', { env: { HISTORY_RETENTION_DAYS: String(2 / 86_400) } });
    try {
      await post(
        server,
        '/v1/email-verify/feedback',
        { events: [{ email: 'old@retain.test', outcome: 'hard_bounce' }] },
        { authorization: `Bearer ${server.key}` },
      );
      const path = '/v1/email-verify/history?email=old@retain.test';
      expect(((await call(server, path, { key: server.key })).json() as { events: unknown[] }).events).toHaveLength(1);
      await waitUntil(
        async () => ((await call(server, path, { key: server.key })).json() as { events: unknown[] }).events.length === 0,
        10_000,
        'the event to expire',
      );
    } finally {
      await server.close();
    }
  });
});
