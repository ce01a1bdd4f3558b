/**
 * What a results file says, through a real gateway and the scripted mail world: every CSV starts
 * with a UTF-8 byte-order mark (whatever was uploaded), cells a spreadsheet would run as formulas
 * come back neutralised in every column (header and address included) while JSON carries them as
 * sent, the full form says what to do (`action`) and which checks were true (`flags`, with
 * `duplicate` on later rows of one address), and duplicates differing only by case are one
 * distinct address, probed once (decisions "List verification"; docs/lists.md "Results").
 */
import { parse } from 'csv-parse/sync';
import { beforeAll, describe, expect, it } from 'vitest';
import { FULL_RESULT_COLUMNS } from '@svc/contracts';
import { call } from '../support/servers.ts';
import { rcptCounts, useListServer, useMailRig, waitForStatus, type ListObjectBody } from './harness.ts';

const mail = useMailRig({
  'fast.test': { host: '127.0.0.51', users: ['ann@fast.test', 'info@fast.test', 'user.12.a@fast.test'] },
  'catch.test': { host: '127.0.0.52', users: [], catchAll: true },
});
const lists = useListServer('embedded', () => ({ ...mail.rig.env, LIST_RETRY_DELAYS_S: '', RATE_LIMIT_EMAIL_VERIFY_LIST: '1000' }));

const FORMULA = '=HYPERLINK("http://evil.example","x")';
const CSV = [
  `Name,=Email,Note`,
  `Smørrebrød ApS,ann@fast.test,${'"=cmd|\' /C calc\'!A0"'}`,
  `+Plus,USER.12.A@FAST.TEST,@SUM(1)`,
  `-Minus,user.12.a@fast.test,"${FORMULA.replaceAll('"', '""')}"`,
  `Info,info@fast.test,\tTabbed`,
  `Catch,who@catch.test,`,
  `Formula address,=1+1@fast.test,`,
].join('\r\n');

async function download(key: string, id: string, query: string): Promise<Buffer> {
  const response = await fetch(`${lists.server.baseUrl}/v1/email-verify/lists/${id}/results?${query}`, {
    headers: { authorization: `Bearer ${key}` },
  });
  expect(response.status).toBe(200);
  return Buffer.from(await response.arrayBuffer());
}

describe('results files', () => {
  let key: string;
  let list: ListObjectBody;
  beforeAll(async () => {
    key = await lists.server.freshKey();
    const created = await call(lists.server, '/v1/email-verify/lists', {
      key,
      method: 'POST',
      headers: { 'content-type': 'text/csv' },
      body: CSV,
    });
    expect(created.status, created.text).toBe(202);
    list = created.json() as ListObjectBody;
    await waitForStatus(lists.server, key, list.id, ['completed']);
  });

  it('duplicates differing only by case are one distinct address, probed once', () => {
    expect(list).toMatchObject({ count: 6, distinct: 5 });
    expect(rcptCounts(mail.rig.servers['fast.test']!).get('user.12.a@fast.test')).toBe(1);
  });

  it('every CSV starts with a byte-order mark and neutralises formula cells in every column; JSON is untouched', async () => {
    const bytes = await download(key, list.id, 'format=csv');
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const rows: string[][] = parse(bytes, { bom: true });
    expect(rows[0]).toEqual(['Name', "'=Email", 'Note', 'verdict', 'score', 'reason', 'did_you_mean']);
    expect(rows[1]!.slice(0, 3)).toEqual(['Smørrebrød ApS', 'ann@fast.test', "'=cmd|' /C calc'!A0"]);
    expect(rows[2]!.slice(0, 3)).toEqual(["'+Plus", 'USER.12.A@FAST.TEST', "'@SUM(1)"]);
    expect(rows[3]!.slice(0, 3)).toEqual(["'-Minus", 'user.12.a@fast.test', `'${FORMULA}`]);
    expect(rows[4]![2]).toBe("'\tTabbed");
    expect(rows[6]![1]).toBe("'=1+1@fast.test");
    for (const row of rows) for (const cell of row) expect(cell).not.toMatch(/^[=+\-@\t\r]/);

    const json = (await call(lists.server, `/v1/email-verify/lists/${list.id}/results`, { key })).json() as {
      results: Array<{ email: string }>;
    };
    expect(json.results.map((result) => result.email)).toContain('=1+1@fast.test');
  });

  it('the full form appends action, flags, provider and probability', async () => {
    const rows: string[][] = parse(await download(key, list.id, 'format=csv&columns=full'), { bom: true });
    expect(rows[0]!.slice(3)).toEqual([...FULL_RESULT_COLUMNS]);
    const byName = new Map(rows.slice(1).map((row) => [row[0]!, row.slice(3)]));
    expect(byName.get('Smørrebrød ApS')).toMatchObject(['deliverable', expect.any(String), 'accepted_email', '', 'keep', '', '', '']);
    expect(byName.get("'+Plus")?.[5]).toBe('');
    expect(byName.get("'-Minus")?.[5], 'the second row of one address').toBe('duplicate');
    expect(byName.get('Info')?.[5]).toContain('role');
    expect(byName.get('Catch')?.slice(0, 6)).toMatchObject(['risky', expect.any(String), 'accept_all', '', 'review', 'catch_all']);
    expect(byName.get('Formula address')?.[4], '`=` is allowed in a local part: an address, rejected').toBe('remove');
  });

  it('refuses an unknown results form', async () => {
    const refused = await call(lists.server, `/v1/email-verify/lists/${list.id}/results?format=csv&columns=wide`, { key });
    expect(refused.status).toBe(400);
    expect(refused.json()).toMatchObject({ error: 'invalid_parameter', details: { param: 'columns' } });
  });
});
