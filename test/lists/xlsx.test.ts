/**
 * Excel workbooks as list uploads, through a real gateway and the scripted mail world: the first
 * sheet (in the workbook's order, wherever its part is stored) is read like a CSV (the address
 * column found by its header, other columns kept, blank rows skipped, shared and inline strings,
 * numbers), results come back as CSV with a byte-order mark; a zip bomb is refused 413 after a
 * bounded amount of inflating, and what is not a workbook, or has no address column, is refused
 * saying why (the headers seen).
 */
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/servers.ts';
import { startListServer, startMultiRig, waitForStatus, type ListObjectBody, type ListServer, type MultiRig } from './harness.ts';
import { xlsx, zipBomb } from './xlsx-file.ts';

const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

let rig: MultiRig;
let server: ListServer;
beforeAll(async () => {
  rig = await startMultiRig({ 'sheet.test': { host: '127.0.0.53', users: ['ann@sheet.test', 'zoe@sheet.test'] } });
  server = await startListServer('embedded', { ...rig.env, LIST_RETRY_DELAYS_S: '', RATE_LIMIT_EMAIL_VERIFY_LIST: '1000' });
});
afterAll(async () => {
  await server?.close();
  await rig?.close();
});

const upload = (key: string, body: Buffer, query = '') =>
  call(server, `/v1/email-verify/lists${query}`, { key, method: 'POST', headers: { 'content-type': XLSX }, body });

describe('Excel workbook uploads', () => {
  it('reads the first sheet like a CSV: the address column by its header, other columns kept, results as CSV', async () => {
    const key = await server.freshKey();
    const book = xlsx([
      [
        ['Company', 'Employees', 'Work Email', 'Note'],
        ['Smørrebrød ApS', 12, 'ann@sheet.test', 'inline:første'],
        [],
        ['Zoë GmbH', 3.5, 'ZOE@SHEET.TEST', ''],
        ['Dup', 1, 'zoe@sheet.test', '=SUM(1)'],
        ['Gone', 0, 'nobody@sheet.test', ''],
        ['No address', 7, '', 'kept'],
      ],
      [['Email'], ['other-sheet@sheet.test']],
    ]);
    const created = await upload(key, book, '?name=workbook');
    expect(created.status, created.text).toBe(202);
    const list = created.json() as ListObjectBody;
    expect(list).toMatchObject({ count: 4, distinct: 3, column: { index: 3, header: 'Work Email' }, encoding: 'xlsx' });
    await waitForStatus(server, key, list.id, ['completed']);

    const response = await fetch(`${server.baseUrl}/v1/email-verify/lists/${list.id}/results?format=csv`, {
      headers: { authorization: `Bearer ${key}` },
    });
    const bytes = Buffer.from(await response.arrayBuffer());
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const rows: string[][] = parse(bytes, { bom: true, relax_column_count: true });
    expect(rows.map((row) => row.slice(0, 5))).toEqual([
      ['Company', 'Employees', 'Work Email', 'Note', 'verdict'],
      ['Smørrebrød ApS', '12', 'ann@sheet.test', 'første', 'deliverable'],
      ['Zoë GmbH', '3.5', 'ZOE@SHEET.TEST', '', 'deliverable'],
      ['Dup', '1', 'zoe@sheet.test', "'=SUM(1)", 'deliverable'],
      ['Gone', '0', 'nobody@sheet.test', '', 'undeliverable'],
      ['No address', '7', '', 'kept', ''],
    ]);
  });

  it('takes ?column= as a CSV upload does', async () => {
    const key = await server.freshKey();
    const created = await upload(
      key,
      xlsx([
        [
          ['Name', 'Backup'],
          ['Ann', 'ann@sheet.test'],
        ],
      ]),
      '?column=2',
    );
    expect(created.status, created.text).toBe(202);
    expect(created.json()).toMatchObject({ count: 1, column: { index: 2, header: 'Backup' } });
  });

  it('refuses a sheet without an address column, listing the headers it saw', async () => {
    const key = await server.freshKey();
    const refused = await upload(
      key,
      xlsx([
        [
          ['Name', 'Phone'],
          ['Ann', '+1 555 0100'],
        ],
      ]),
    );
    expect(refused.status).toBe(400);
    expect(refused.json()).toMatchObject({ error: 'invalid_request', details: { columns: ['Name', 'Phone'] } });
    expect((refused.json() as { message: string }).message).toContain('1 "Name", 2 "Phone"');
  });

  it('refuses what is not a workbook, saying so', async () => {
    const key = await server.freshKey();
    const refused = await upload(key, Buffer.from('Email\nann@sheet.test\n'));
    expect(refused.status).toBe(400);
    expect(refused.json()).toMatchObject({ error: 'invalid_request', message: expect.stringMatching(/workbook could not be read/) });
  });

  it('refuses a zip bomb 413 after a bounded amount of inflating, and stays responsive', async () => {
    const key = await server.freshKey();
    const bomb = await zipBomb(256);
    expect(bomb.length).toBeLessThan(2 * 1024 * 1024);
    const started = Date.now();
    const refused = await upload(key, bomb);
    expect(refused.status).toBe(413);
    expect(refused.json()).toMatchObject({ error: 'payload_too_large', message: expect.stringMatching(/inflates to more than 128 MiB/) });
    console.info(`zip bomb: ${bomb.length} bytes refused in ${Date.now() - started} ms`);
    // The message above says it stopped at the bound; the time only catches a reader that inflates
    // far more (7 s alone, 27 s beside the other test files for the 128 MiB it may inflate).
    expect(Date.now() - started, 'stopped at the bound, not after inflating 256 MiB').toBeLessThan(45_000);
    expect((await call(server, '/v1/email-verify/lists', { key })).json()).toMatchObject({ lists: [] });
    // Making the bomb deflates 256 MiB in this process: beside the other test files it took over 30 s.
  }, 90_000);
});
