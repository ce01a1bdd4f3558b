/**
 * The lists API end to end in both modes, against the scripted mail world: creation from JSON and
 * CSV, results in input order (JSON and CSV, duplicates probed once), pricing per started 100
 * processed distinct addresses drawing on the batch allowance, paging, another key's lists,
 * the active-list limit, cancellation (nothing more probed nor billed), the end callback, and
 * every refusal in the contract's format.
 */
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIST_ID } from '@svc/contracts';
import { WORK_CHUNK_SIZE } from '@svc/lists';
import { call, type Mode, postBatch } from '../support/servers.ts';
import {
  createList,
  getList,
  rcptCounts,
  startListServer,
  startMultiRig,
  waitForStatus,
  type ListObjectBody,
  type ListServer,
  type MultiRig,
  type ResultBody,
} from './harness.ts';

let rig: MultiRig;
beforeAll(async () => {
  rig = await startMultiRig({
    'fast.test': { host: '127.0.0.41', users: ['ann@fast.test', 'bob@fast.test', 'Cy@fast.test'] },
    // 100 RCPTs one at a time, 100 ms each: a chunk's session takes 10 s.
    'slow.test': { host: '127.0.0.42', users: [], catchAll: false, pipelining: false, replyDelayMs: 100 },
  });
});
afterAll(async () => rig?.close());

// Creation's rate limit (10 a minute by default) is the shared limiter's, tested in the tools' test.
const ENV = () => ({
  ...rig.env,
  VERIFY_BATCH_DEADLINE_MS: '20000',
  LIST_RETRY_DELAYS_S: '',
  LIST_MAX_ACTIVE_PER_KEY: '2',
  RATE_LIMIT_EMAIL_VERIFY_LIST: '1000',
});
const slowAddresses = (count: number, tag: string) => Array.from({ length: count }, (_, i) => `${tag}${i}@slow.test`);

describe.each<Mode>(['embedded', 'distributed'])('%s mode', (mode) => {
  let server: ListServer;
  beforeAll(async () => {
    server = await startListServer(mode, ENV());
  });
  afterAll(async () => server?.close());

  it('JSON: 202 with the list object and Location; results in input order, duplicates probed once; the callback once', async () => {
    const before = rcptCounts(rig.servers['fast.test']!).get('ann@fast.test') ?? 0;
    const emails = ['ann@fast.test', 'nobody@fast.test', ' ann@FAST.test', 'ann@gmial.com', 'broken', 'bob@fast.test', 'ann@fast.test'];
    const key = await server.freshKey();
    const created = await createList(server, key, { emails, name: 'crm export', callbackUrl: 'https://hooks.example.com/lists' });
    expect(created.status).toBe(202);
    expect(created.headers.get('x-service-cost')).toBe('0');
    expect(created.headers.get('x-service-free-remaining')).toBe('10');
    const list = created.json() as ListObjectBody;
    expect(created.headers.get('location')).toBe(`/v1/email-verify/lists/${list.id}`);
    expect(list).toMatchObject({ name: 'crm export', count: 7, distinct: 5, costUsd: '0', completedAt: null });
    expect(list.id).toMatch(LIST_ID);
    expect(['queued', 'running']).toContain(list.status);

    const done = await waitForStatus(server, key, list.id, ['completed']);
    expect(done).toMatchObject({
      count: 7,
      distinct: 5,
      processed: 7,
      summary: { deliverable: 4, risky: 0, undeliverable: 3 },
      costUsd: '0',
    });
    expect(Date.parse(done.completedAt!)).toBeGreaterThanOrEqual(Date.parse(done.startedAt!));

    const results = await call(server, `/v1/email-verify/lists/${list.id}/results`, { key });
    expect(results.status).toBe(200);
    expect(results.headers.get('x-list-pending')).toBe('0');
    const body = results.json() as { id: string; status: string; count: number; pending: number; results: ResultBody[] };
    expect(body).toMatchObject({ id: list.id, status: 'completed', count: 7, pending: 0 });
    expect(body.results.map((result) => [result.email, result.verdict])).toEqual([
      ['ann@fast.test', 'deliverable'],
      ['nobody@fast.test', 'undeliverable'],
      [' ann@FAST.test', 'deliverable'],
      ['ann@gmial.com', 'undeliverable'],
      ['broken', 'undeliverable'],
      ['bob@fast.test', 'deliverable'],
      ['ann@fast.test', 'deliverable'],
    ]);
    expect(body.results[3]).toMatchObject({ reason: 'invalid_domain', didYouMean: 'ann@gmail.com' });
    // Three spellings of one address: one RCPT for it.
    expect((rcptCounts(rig.servers['fast.test']!).get('ann@fast.test') ?? 0) - before).toBe(1);

    await expect.poll(() => server.dispatcher.events.filter((event) => event.body.includes(list.id)).length).toBe(1);
    const event = server.dispatcher.events.find((candidate) => candidate.body.includes(list.id))!;
    expect(event).toMatchObject({ type: 'list.completed', url: 'https://hooks.example.com/lists' });
    expect(event.id).toMatch(/^evt_/);
    expect(JSON.parse(event.body)).toEqual({ ...done, event: 'list.completed' });
  });

  it('CSV: BOM, `;`, quoted fields, the address column by its header; results keep the columns', async () => {
    const key = await server.freshKey();
    const csv =
      '\ufeffName;E-Mail;Note\r\n' +
      'Ann;ann@fast.test;"likes ; semicolons"\r\n' +
      '"Doe, Jane";nobody@fast.test;"two\nlines"\r\n' +
      '\r\n' +
      'Cy;Cy@fast.test;\r\n';
    const created = await call(server, '/v1/email-verify/lists?name=csv%20upload', {
      key,
      method: 'POST',
      headers: { 'content-type': 'text/csv' },
      body: csv,
    });
    expect(created.status).toBe(202);
    const list = created.json() as ListObjectBody;
    expect(list).toMatchObject({ name: 'csv upload', count: 3, distinct: 3 });
    await waitForStatus(server, key, list.id, ['completed']);

    const results = await call(server, `/v1/email-verify/lists/${list.id}/results?format=csv`, { key });
    expect(results.status).toBe(200);
    expect(results.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    const bytes = Buffer.from(
      await (
        await fetch(`${server.baseUrl}/v1/email-verify/lists/${list.id}/results?format=csv`, {
          headers: { authorization: `Bearer ${key}` },
        })
      ).arrayBuffer(),
    );
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]); // as uploaded, for spreadsheets
    const rows: string[][] = parse(results.text, { bom: true, delimiter: ';' });
    expect(rows[0]).toEqual(['Name', 'E-Mail', 'Note', 'verdict', 'score', 'reason', 'did_you_mean']);
    expect(rows.slice(1).map((row) => [row[0], row[1], row[2], row[3], row[5]])).toEqual([
      ['Ann', 'ann@fast.test', 'likes ; semicolons', 'deliverable', 'accepted_email'],
      ['Doe, Jane', 'nobody@fast.test', 'two\nlines', 'undeliverable', 'rejected_email'],
      ['Cy', 'Cy@fast.test', '', 'deliverable', 'accepted_email'],
    ]);
    expect(Number(rows[1]![4])).toBeGreaterThan(50);
  });

  it('CSV without a header: a bare column of addresses, `,` kept', async () => {
    const key = await server.freshKey();
    const created = await call(server, '/v1/email-verify/lists', {
      key,
      method: 'POST',
      headers: { 'content-type': 'text/csv; charset=utf-8' },
      body: 'ann@fast.test,first\nnobody@fast.test,second\n',
    });
    expect(created.status).toBe(202);
    const list = created.json() as ListObjectBody;
    expect(list.count).toBe(2);
    await waitForStatus(server, key, list.id, ['completed']);
    const rows: string[][] = parse((await call(server, `/v1/email-verify/lists/${list.id}/results?format=csv`, { key })).text);
    expect(rows.map((row) => row.slice(0, 4))).toEqual([
      ['email', 'column_2', 'verdict', 'score'],
      ['ann@fast.test', 'first', 'deliverable', rows[1]![3]],
      ['nobody@fast.test', 'second', 'undeliverable', rows[2]![3]],
    ]);
  });

  it('prices each started 100 processed distinct addresses as a batch, drawing on the batch allowance first', async () => {
    const key = await server.freshKey({ 'email-verify.batch': 1 });
    // 250 distinct malformed entries (no network needed) and one duplicate: 3 units.
    const emails = [...Array.from({ length: 250 }, (_, i) => `nobody-${i}`), 'nobody-0'];
    const list = (await createList(server, key, { emails })).json() as ListObjectBody;
    expect(list).toMatchObject({ count: 251, distinct: 250 });
    const done = await waitForStatus(server, key, list.id, ['completed']);
    expect(done).toMatchObject({ processed: 251, costUsd: '0.3', summary: { deliverable: 0, risky: 0, undeliverable: 251 } });
    const usage = (await call(server, '/v1/usage', { key })).json() as {
      operations: Record<string, { calls: number; billableCalls: number; freeRemaining: number; costUsd: string }>;
      allowances: unknown[];
      totalCostUsd: string;
    };
    // In addresses, with the units of 100 they were billed in, the unit price and the allowance drawn on.
    expect(usage.operations['email-verify.list']).toEqual({
      calls: 3,
      billableCalls: 2,
      freeRemaining: 0,
      costUsd: '0.3',
      priceUsd: '0.15',
      allowanceFrom: 'email-verify.batch',
      addresses: 250,
    });
    expect(usage.operations['email-verify.batch']).toMatchObject({ calls: 0, freeRemaining: 0, priceUsd: '0.15' });
    expect(usage.allowances).toContainEqual({
      operations: ['email-verify.batch', 'email-verify.list'],
      allowance: 1,
      used: 3,
      remaining: 0,
    });
    expect(usage.allowances).toHaveLength(4); // the batch allowance once, for batches and lists
    expect(usage.totalCostUsd).toBe('0.3');
    // The allowance is used up by the list: the next batch costs its price.
    const batch = await postBatch(server, key, ['broken']);
    expect(batch.headers.get('x-service-cost')).toBe('0.15');
  });

  it('pages the key’s lists newest first; another key sees none of them', async () => {
    const key = await server.freshKey();
    const ids: string[] = [];
    for (const name of ['one', 'two', 'three']) {
      const list = (await createList(server, key, { emails: ['broken'], name })).json() as ListObjectBody;
      ids.push(list.id);
      await waitForStatus(server, key, list.id, ['completed']);
    }
    const first = (await call(server, '/v1/email-verify/lists?limit=2', { key })).json() as {
      lists: ListObjectBody[];
      nextCursor: string | null;
    };
    expect(first.lists.map((list) => list.name)).toEqual(['three', 'two']);
    expect(first.nextCursor).not.toBeNull();
    const second = (await call(server, `/v1/email-verify/lists?limit=2&cursor=${first.nextCursor}`, { key })).json() as {
      lists: ListObjectBody[];
      nextCursor: string | null;
    };
    expect(second).toMatchObject({ lists: [{ name: 'one' }], nextCursor: null });
    expect((await call(server, '/v1/email-verify/lists?cursor=nonsense', { key })).json()).toMatchObject({
      error: 'invalid_parameter',
      details: { param: 'cursor' },
    });
    expect((await call(server, '/v1/email-verify/lists?limit=101', { key })).status).toBe(400);

    const other = await server.freshKey();
    expect(((await call(server, '/v1/email-verify/lists', { key: other })).json() as { lists: unknown[] }).lists).toEqual([]);
    for (const [path, method] of [
      [`/v1/email-verify/lists/${ids[0]}`, 'GET'],
      [`/v1/email-verify/lists/${ids[0]}/results`, 'GET'],
      [`/v1/email-verify/lists/${ids[0]}`, 'DELETE'],
      ['/v1/email-verify/lists/lst_nope', 'GET'],
      [`/v1/email-verify/lists/${'x'.repeat(500)}`, 'GET'],
    ] as const) {
      const response = await call(server, path, { key: other, method });
      expect(response.status).toBe(404);
      expect(response.json()).toMatchObject({ error: 'not_found' });
    }
    // Cancelling reads no body, whatever a client library sends along.
    for (const [type, body] of [
      ['application/json', undefined],
      ['application/json', '{'],
      ['text/plain', 'please'],
    ] as const) {
      const response = await call(server, `/v1/email-verify/lists/${ids[0]}`, {
        key: other,
        method: 'DELETE',
        headers: { 'content-type': type },
        body,
      });
      expect(response.status, `${type} ${body}`).toBe(404);
    }
    // Cancelling's scope of its own leaves the rule for a wrong method whole: 405, whatever the body.
    const wrongMethod = await call(server, `/v1/email-verify/lists/${ids[0]}`, {
      key: other,
      method: 'PUT',
      headers: { 'content-type': 'text/plain' },
      body: 'x',
    });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toContain('DELETE');
  });

  it('results while running: the settled entries so far, the rest counted as pending; cancel stops probing and billing', async () => {
    const key = await server.freshKey();
    const slow = rig.servers['slow.test']!;
    // Chunks are cut from the addresses sorted by domain: the first chunk's worth (fast.test) make chunk 0.
    const fast = ['ann@fast.test', ...Array.from({ length: WORK_CHUNK_SIZE - 2 }, (_, i) => `n${i}@fast.test`), 'bob@fast.test'];
    const emails = [fast[0]!, ...slowAddresses(300, `c${mode}`), ...fast.slice(1)];
    const list = (await createList(server, key, { emails, callbackUrl: 'https://hooks.example.com/x' })).json() as ListObjectBody;
    // The fast domain's chunk settles first; the slow one's first session is under way.
    await expect.poll(async () => (await getList(server, key, list.id)).processed, { timeout: 10_000 }).toBe(WORK_CHUNK_SIZE);
    await expect.poll(() => rcptCounts(slow).has(`c${mode}0@slow.test`), { timeout: 10_000 }).toBe(true);
    const partial = await call(server, `/v1/email-verify/lists/${list.id}/results`, { key });
    expect(partial.headers.get('x-list-pending')).toBe('300');
    const body = partial.json() as { status: string; pending: number; results: ResultBody[] };
    expect(body.status).toBe('running');
    expect(body.pending).toBe(300);
    expect(body.results.map((result) => result.email)).toEqual(fast);

    // Two lists active for this key (the limit is 2): a third is refused, saying why.
    const second = (await createList(server, key, { emails: slowAddresses(5, `d${mode}`) })).json() as ListObjectBody;
    const third = await createList(server, key, { emails: ['broken'] });
    expect(third.status).toBe(429);
    expect(third.json()).toMatchObject({ error: 'rate_limited', message: expect.stringContaining('2 lists queued or running') });
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(third.headers.get('x-service-cost')).toBe('0');

    const cancelled = await call(server, `/v1/email-verify/lists/${list.id}`, { key, method: 'DELETE' });
    expect(cancelled.status).toBe(200);
    expect(cancelled.json()).toMatchObject({ status: 'cancelled', processed: WORK_CHUNK_SIZE });
    await call(server, `/v1/email-verify/lists/${second.id}`, { key, method: 'DELETE' });
    const sessions = slow.connections;
    // Nothing happens: no new session nor later chunk for the cancelled lists, past their end checks (1 s, processor.ts).
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(slow.connections).toBe(sessions);
    const asked = rcptCounts(slow);
    expect(
      slowAddresses(300, `c${mode}`)
        .slice(WORK_CHUNK_SIZE)
        .filter((address) => asked.has(address)),
    ).toEqual([]);
    const after = await getList(server, key, list.id);
    expect(after).toMatchObject({ status: 'cancelled', processed: WORK_CHUNK_SIZE, costUsd: '0' });
    // The cancelled list's file keeps every input row: those never probed are not_verified (JSON: verdict null).
    const kept = await call(server, `/v1/email-verify/lists/${list.id}/results`, { key });
    expect(kept.headers.get('x-list-pending')).toBe('0');
    const keptBody = kept.json() as { pending: number; results: Array<{ email: string; verdict: string | null; reason: string }> };
    expect(keptBody.pending).toBe(0);
    expect(keptBody.results.map((result) => result.email)).toEqual(emails);
    expect(keptBody.results.filter((result) => result.verdict === null && result.reason === 'not_verified')).toHaveLength(300);
    const csvRows: string[][] = parse((await call(server, `/v1/email-verify/lists/${list.id}/results?format=csv`, { key })).text, {
      bom: true,
    });
    expect(csvRows).toHaveLength(1 + emails.length);
    expect(csvRows[2]).toEqual([`c${mode}0@slow.test`, '', '', 'not_verified', '']);
    const usage = (await call(server, '/v1/usage', { key })).json() as { operations: Record<string, { calls: number }> };
    expect(usage.operations['email-verify.list']?.calls).toBe(1); // the fast chunk's unit, inside the allowance
    await expect
      .poll(() => server.dispatcher.events.filter((event) => event.body.includes(list.id)).map((event) => event.type))
      .toEqual(['list.cancelled']);
    // With a slot free again, creating works.
    expect((await createList(server, key, { emails: ['broken'] })).status).toBe(202);
  }, 40_000);

  it('refuses bad lists in the contract’s format', async () => {
    const key = await server.freshKey();
    const tooMany = await createList(server, key, { emails: Array.from({ length: 100_001 }, (_, i) => `a${i}`) });
    expect(tooMany.status).toBe(400);
    expect(tooMany.json()).toMatchObject({ error: 'too_many_emails', message: 'A list may contain at most 100000 addresses.' });

    const csvTooMany = await call(server, '/v1/email-verify/lists', {
      key,
      method: 'POST',
      headers: { 'content-type': 'text/csv' },
      body: `email\n${Array.from({ length: 100_001 }, (_, i) => `a${i}`).join('\n')}\n`,
    });
    expect(csvTooMany.json()).toMatchObject({ error: 'too_many_emails' });

    const huge = await call(server, '/v1/email-verify/lists', {
      key,
      method: 'POST',
      headers: { 'content-type': 'text/csv' },
      body: `email\n${'x'.repeat(17 * 1024 * 1024)}\n`,
    });
    expect(huge.status).toBe(413);
    expect(huge.json()).toMatchObject({ error: 'payload_too_large', message: expect.stringContaining('16 MiB') });
    expect(huge.headers.get('x-service-cost')).toBe('0');

    // The 64 KiB limit of every other route stands.
    const batch = await postBatch(server, key, ['x'.repeat(70 * 1024)]);
    expect(batch.status).toBe(413);

    const plain = await call(server, '/v1/email-verify/lists', {
      key,
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'a@b.co',
    });
    expect(plain.status).toBe(415);
    expect(plain.json()).toMatchObject({ error: 'unsupported_media_type', message: expect.stringContaining('text/csv') });

    for (const callbackUrl of ['http://hooks.example.com/x', 'https://127.0.0.1/x', 'https://user:pw@hooks.example.com/', 'not a url']) {
      const response = await createList(server, key, { emails: ['a@b.co'], callbackUrl });
      expect(response.status).toBe(400);
      expect(response.json()).toMatchObject({ error: 'invalid_parameter', details: { param: 'callbackUrl' } });
    }
    const csvCallback = await call(server, '/v1/email-verify/lists?callbackUrl=http%3A%2F%2F10.0.0.1%2F', {
      key,
      method: 'POST',
      headers: { 'content-type': 'text/csv' },
      body: 'email\na@b.co\n',
    });
    expect(csvCallback.json()).toMatchObject({ error: 'invalid_parameter', details: { param: 'callbackUrl' } });

    expect((await createList(server, key, { emails: [] })).json()).toMatchObject({ error: 'invalid_request' });
    expect((await createList(server, key, { emails: ['a@b.co'], extra: 1 })).json()).toMatchObject({ error: 'invalid_request' });
    expect((await createList(server, key, { emails: [1] })).json()).toMatchObject({ error: 'invalid_request' });
    const headerOnly = await call(server, '/v1/email-verify/lists', {
      key,
      method: 'POST',
      headers: { 'content-type': 'text/csv' },
      body: 'email\n',
    });
    expect(headerOnly.json()).toMatchObject({ error: 'invalid_request', message: expect.stringContaining('empty') });
    const unclosed = await call(server, '/v1/email-verify/lists', {
      key,
      method: 'POST',
      headers: { 'content-type': 'text/csv' },
      body: 'Name,Email\r\n"Ann,ann@example.com\r\nBob,bob@example.com\r\n',
    });
    // Where the quote opened (line 2, byte 13 of the file), not where the parser gave up.
    expect(unclosed.json()).toEqual({
      error: 'invalid_request',
      message: expect.stringMatching(/quoted field that is not closed, opening at line 2, byte 13\./),
      details: { line: 2, byte: 13 },
    });
    const stray = await call(server, '/v1/email-verify/lists', {
      key,
      method: 'POST',
      headers: { 'content-type': 'text/csv' },
      body: 'Name,Email\r\nAnn,a"b@example.com\r\n',
    });
    expect(stray.json()).toEqual({
      error: 'invalid_request',
      message: expect.stringMatching(/quote inside a field that is not quoted at line 2, byte 18\./),
      details: { line: 2, byte: 18 },
    });
    expect((await call(server, '/v1/email-verify/lists', { key: null })).status).toBe(401);
    // A parameter of another list route is unknown here, not malformed.
    expect((await call(server, '/v1/email-verify/lists?format=csv', { key })).json()).toMatchObject({
      error: 'invalid_parameter',
      message: 'Unknown parameter `format`.',
    });

    // Refused part-way through the body: a row over 1 MiB while the parser waited for room (this
    // hung until the request timeout and answered 408), and a streamed upload (no Content-Length)
    // that passes 16 MiB. Each is answered at once, in the contract's terms, not with a reset.
    const longRow = await call(server, '/v1/email-verify/lists', {
      key,
      method: 'POST',
      headers: { 'content-type': 'text/csv' },
      body: `email\n${'x'.repeat(2 * 1024 * 1024)}\n`,
      signal: AbortSignal.timeout(20_000),
    });
    expect(longRow.json()).toMatchObject({ error: 'invalid_request', message: expect.stringContaining('a row is longer than 1 MiB') });
    // Wide rows (under the 1 MiB row limit), so that reading them costs little beyond the bytes.
    const rows = new TextEncoder().encode(`someone@example.com,${'n'.repeat(900 * 1024)}\n`);
    const streamed = await call(server, '/v1/email-verify/lists', {
      key,
      method: 'POST',
      headers: { 'content-type': 'text/csv' },
      body: ReadableStream.from(
        (function* () {
          yield new TextEncoder().encode('email,notes\n');
          for (let sent = 0; sent < 17 * 1024 * 1024; sent += rows.length) yield rows;
        })(),
      ),
      duplex: 'half',
      signal: AbortSignal.timeout(20_000),
    });
    expect(streamed.status).toBe(413);
    expect(streamed.json()).toMatchObject({ error: 'payload_too_large' });
    // None of these took one of the key's active-list slots.
    expect((await createList(server, key, { emails: ['broken'] })).status).toBe(202);
    expect((await createList(server, key, { emails: ['broken'] })).status).toBe(202);
  }, 60_000);
});
