/**
 * Uploads of real-shaped exports end to end (docs/lists.md, "The CSV format" and "The address
 * column"): Outlook, Google Contacts, HubSpot and Mailchimp headers, a German Excel file in
 * Windows-1252 with `;`, Excel's "Unicode text" (UTF-16LE, tabs), an address column headed
 * `Contact`; the list object says which column and encoding were read, rows without an address
 * come back with an empty verdict and are neither entries nor billed, `?column=` by name and by
 * index, a `charset` that wins; and the refusals (not CSV, a workbook or a binary file renamed
 * .csv, no address column, over 16 MiB), none of which creates a list or bills anything.
 */
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/servers.ts';
import { neutraliseCell } from '@svc/contracts';
import { EXPORTS, EXPORT_DOMAIN, EXPORT_USERS, paddedRows, type Export } from './exports.ts';
import { startListServer, startMultiRig, waitForStatus, type ListObjectBody, type ListServer, type MultiRig } from './harness.ts';

let rig: MultiRig;
let server: ListServer;
beforeAll(async () => {
  rig = await startMultiRig({ [EXPORT_DOMAIN]: { host: '127.0.0.83', users: EXPORT_USERS } });
  server = await startListServer('embedded', { ...rig.env, LIST_RETRY_DELAYS_S: '', RATE_LIMIT_EMAIL_VERIFY_LIST: '1000' });
});
afterAll(async () => {
  await server?.close();
  await rig?.close();
});

const upload = (key: string, body: Buffer | string, contentType = 'text/csv', query = '') =>
  call(server, `/v1/email-verify/lists${query}`, { key, method: 'POST', headers: { 'content-type': contentType }, body });

async function csvResults(key: string, id: string, delimiter: string): Promise<string[][]> {
  const results = await call(server, `/v1/email-verify/lists/${id}/results?format=csv`, { key });
  return parse(results.text, { bom: true, delimiter, relax_column_count: true });
}

async function usageOf(key: string): Promise<{ calls: number; costUsd: string }> {
  const usage = (await call(server, '/v1/usage', { key })).json() as { operations: Record<string, { calls: number; costUsd: string }> };
  return usage.operations['email-verify.list']!;
}

describe('uploads of real-shaped exports', () => {
  it.each(EXPORTS.map((file): [string, Export] => [file.name, file]))('%s', async (_name, file) => {
    const key = await server.freshKey();
    const created = await upload(key, file.bytes, file.contentType);
    expect(created.status, created.text).toBe(202);
    const entries = file.verdicts.filter((verdict) => verdict !== '').length;
    expect(created.json()).toMatchObject({ column: file.column, encoding: file.encoding, count: entries, distinct: entries });
    const list = created.json() as ListObjectBody;
    const done = await waitForStatus(server, key, list.id, ['completed']);
    const summed = done.summary.deliverable + done.summary.risky + done.summary.undeliverable;
    expect(summed, 'rows without an address are not in the summary').toBe(entries);

    const [header, ...rows] = await csvResults(key, list.id, file.delimiter);
    expect(header).toEqual([...file.rows[0]!, 'verdict', 'score', 'reason', 'did_you_mean']);
    expect(
      rows.map((row) => row.slice(0, file.rows[0]!.length)),
      'every row, decoded, in order',
    ).toEqual(paddedRows(file).map((row) => row.map(neutraliseCell))); // a phone's `+1 ...` comes back as `'+1 ...`: never run as a formula
    expect(rows.map((row) => row[file.rows[0]!.length])).toEqual(file.verdicts);
    for (const [i, row] of rows.entries())
      if (file.verdicts[i] === '') expect(row.slice(file.rows[0]!.length), 'no address: empty result columns').toEqual(['', '', '', '']);

    const json = (await call(server, `/v1/email-verify/lists/${list.id}/results`, { key })).json() as { results: unknown[] };
    expect(json.results, 'JSON results hold the entries only').toHaveLength(entries);
  });

  it('bills only the rows that have an address', async () => {
    const key = await server.freshKey({ 'email-verify.batch': 0 });
    const rows = Array.from({ length: 150 }, (_, i) => (i < 50 ? `Person ${i},p${i}@crm.test` : `Person ${i},`));
    const created = await upload(key, `Name,Email\n${rows.join('\n')}\n`);
    const list = created.json() as ListObjectBody;
    expect(list).toMatchObject({ count: 50, distinct: 50 });
    expect(await waitForStatus(server, key, list.id, ['completed'])).toMatchObject({ processed: 50, costUsd: '0.15' });
    expect(await usageOf(key)).toMatchObject({ calls: 1, costUsd: '0.15' });
    expect(await csvResults(key, list.id, ',')).toHaveLength(151);
  });

  it('takes ?column= by header (any case) and by 1-based index, and says which it read', async () => {
    const key = await server.freshKey();
    const text = 'Name,Email,Backup Email\nAnn,gone@crm.test,ann@crm.test\n';
    const byName = await upload(key, text, 'text/csv', '?column=backup%20EMAIL');
    expect(byName.json()).toMatchObject({ column: { index: 3, header: 'Backup Email' }, encoding: 'utf-8' });
    const byIndex = await upload(key, text, 'text/csv', '?column=2');
    expect(byIndex.json()).toMatchObject({ column: { index: 2, header: 'Email' } });
    const done = await waitForStatus(server, key, (byName.json() as ListObjectBody).id, ['completed']);
    expect(done.summary).toEqual({ deliverable: 1, risky: 0, undeliverable: 0 });
    const unknown = await upload(key, text, 'text/csv', '?column=Phone');
    expect(unknown.status).toBe(400);
    expect(unknown.json()).toMatchObject({
      error: 'invalid_parameter',
      details: { param: 'column' },
      message: expect.stringContaining('"Phone"'),
    });
    const json = await call(server, '/v1/email-verify/lists?column=2', {
      key,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ emails: ['ann@crm.test'] }),
    });
    expect(json.json()).toMatchObject({ error: 'invalid_parameter', details: { param: 'column' } });
    const headerless = await upload(key, 'Ann,ann@crm.test\nBob,bob@crm.test\n');
    expect(headerless.json()).toMatchObject({ column: { index: 2, header: null }, count: 2 });
  });

  it('lets a charset parameter win over detection', async () => {
    const key = await server.freshKey();
    // Valid UTF-8 either way ("Ã¼" or "ü"): the charset decides.
    const bytes = Buffer.from('Name;Mail\nJ\u00c3\u00bcrgen;jurgen@crm.test\n', 'latin1');
    const auto = await upload(key, bytes);
    expect(auto.json()).toMatchObject({ encoding: 'utf-8' });
    const named = await upload(key, bytes, 'text/csv; charset=windows-1252');
    expect(named.json()).toMatchObject({ encoding: 'windows-1252' });
    const id = (named.json() as ListObjectBody).id;
    await waitForStatus(server, key, id, ['completed']);
    expect((await csvResults(key, id, ';'))[1]?.[0]).toBe('JÃ¼rgen');
  });

  it('refuses what is not a list of addresses, saying what to do; no list is created and nothing billed', async () => {
    const key = await server.freshKey();
    const refusals: Array<[body: Buffer | string, status: number, message: RegExp]> = [
      [
        Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0x00, 0x06, 0x00, 0x08, 0x00]),
        400,
        /an Excel workbook \(\.xlsx\).*Save it as "CSV UTF-8"/,
      ],
      [
        Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d]),
        400,
        /control character \(0x00\), so it is not text at line 3, byte 9/,
      ],
      ['Name,Phone,City\nAnn,+1 555 0100,Springfield\nBob,+1 555 0101,Shelbyville\n', 400, /No column of this file holds e-mail addresses/],
      ['{ "emails": ["ann@crm.test"] }', 400, /The body is JSON, not CSV/],
      [`Name,Email\n${'x'.repeat(20 * 1024 * 1024)}\n`, 413, /at most 16 MiB/],
    ];
    for (const [body, status, message] of refusals) {
      const response = await upload(key, body);
      expect(response.status, response.text).toBe(status);
      expect(response.json()).toMatchObject({ message: expect.stringMatching(message) });
    }
    expect((await call(server, '/v1/email-verify/lists', { key })).json()).toEqual({ lists: [], nextCursor: null });
    expect(await usageOf(key)).toMatchObject({ calls: 0, costUsd: '0' });
  }, 30_000);
});
