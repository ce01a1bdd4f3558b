/**
 * Learning from sends in the console, in Chromium against the product as a real process: the
 * Feedback page reads a CSV of bounces and deliveries (an ESP's words for outcomes), refuses the
 * rows it cannot send with their row numbers, posts the rest to the generic feedback door and
 * says how many were recorded; then a list at two catch-all domains, one where the reported
 * sends delivered and one where they bounced, shows each verdict's reasons beside the chart
 * (as the API's results file counts them), the spread of its catch-all addresses' probability,
 * and downloads those at or above a chosen probability (the API's full form, byte-order mark kept).
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { axe, screenshots, serious } from './browser.ts';
import { listObject } from './setup.ts';
import { records, signedInConsole } from './signed-in.ts';

const suite = signedInConsole(
  [],
  { shop: '127.0.0.101', catch: '127.0.0.102', slow: '127.0.0.103' },
  {},
  { 'likely.test': { host: '127.0.0.104', catchAll: true }, 'unlikely.test': { host: '127.0.0.105', catchAll: true } },
);

const DELIVERED = Array.from({ length: 6 }, (_, i) => `sent${i}@likely.test`);
const BOUNCED = Array.from({ length: 8 }, (_, i) => `gone${i}@unlikely.test`);
const SENDS = [
  'Email,Event,Campaign',
  ...DELIVERED.map((address) => `${address},Delivered,November`),
  ...BOUNCED.map((address) => `${address},bounce,November`),
  'spam@likely.test,spamreport,November',
  ',bounce,November',
  'not-an-address,bounce,November',
  'open@likely.test,opened,November',
].join('\r\n');

const FRESH = [
  ...Array.from({ length: 5 }, (_, i) => `new${i}@likely.test`),
  ...Array.from({ length: 5 }, (_, i) => `new${i}@unlikely.test`),
];
const LIST = ['email', ...FRESH, 'gone0@unlikely.test', 'spam@likely.test', 'nobody@shop.test'].join('\r\n');

const history = z.object({ events: z.array(z.object({ at: z.string(), outcome: z.string(), source: z.string() })) });

describe('the console: learning from sends', () => {
  it('takes a CSV of bounces on the Feedback page: says what it reads, refuses rows with why, records the rest', async () => {
    const { page, api } = suite.rig;
    await page.getByRole('link', { name: 'Feedback' }).click();
    await page.getByRole('heading', { name: 'Feedback', level: 1 }).waitFor();
    await page.getByText('The page reads two columns of a CSV file').waitFor();
    // A file without an outcome column: nothing to send until one is chosen.
    const bare = 'email,name\r\nann@likely.test,Ann\r\n';
    await page.getByLabel('CSV file').setInputFiles({ name: 'bare.csv', mimeType: 'text/csv', buffer: Buffer.from(bare) });
    await page.getByText('No column of this file reads as outcomes: choose the outcome column.').waitFor();
    expect(await page.getByRole('button', { name: 'Send feedback' }).isDisabled()).toBe(true);
    await page.getByLabel('Outcome column').selectOption({ label: 'name' });
    await page.getByText('0 events to send: 0 hard_bounce, 0 soft_bounce, 0 delivered, 0 complaint; 1 row refused.').waitFor();
    expect(await page.getByRole('button', { name: 'Send feedback' }).isDisabled()).toBe(true);

    await page.getByLabel('CSV file').setInputFiles({ name: 'sends.csv', mimeType: 'text/csv', buffer: Buffer.from(SENDS) });
    expect(await page.getByLabel('Address column').locator('option:checked').textContent()).toBe('Email');
    expect(await page.getByLabel('Outcome column').locator('option:checked').textContent()).toBe('Event');
    await page.getByText('15 events to send: 8 hard_bounce, 0 soft_bounce, 6 delivered, 1 complaint; 3 rows refused.').waitFor();
    const refused = page.getByRole('region', { name: 'Refused rows' });
    const tableRows = refused.getByRole('row');
    const cells: string[][] = [];
    for (let i = 1; i < (await tableRows.count()); i += 1) cells.push(await tableRows.nth(i).getByRole('cell').allTextContents());
    expect(cells).toEqual([
      ['17', '', 'no address'],
      ['18', 'not-an-address', 'not an e-mail address'],
      ['19', 'open@likely.test', '"opened" is not an outcome (hard_bounce, soft_bounce, delivered, complaint)'],
    ]);
    expect(serious(await axe(page, 'feedback'))).toEqual([]);

    await page.getByRole('button', { name: 'Send feedback' }).click();
    await page.getByRole('status').getByText('Recorded 15 events from sends.csv. 3 rows refused here and not sent.').waitFor();
    const bounced = history.parse(await (await api('/v1/email-verify/history?email=gone3@unlikely.test')).json());
    expect(bounced.events).toEqual([{ at: expect.any(String), outcome: 'hard_bounce', source: 'api' }]);
    const delivered = history.parse(await (await api('/v1/email-verify/history?email=Sent0@likely.test')).json());
    expect(delivered.events.map((event) => event.outcome)).toEqual(['delivered']);
    const refusedRow = history.parse(await (await api('/v1/email-verify/history?email=open@likely.test')).json());
    expect(refusedRow.events, 'a refused row is not sent').toEqual([]);
    expect(serious(await axe(page, 'feedback-sent'))).toEqual([]);
    await screenshots(page, 'feedback');
  });

  it('shows a list’s reasons beside the chart, its catch-all spread, and downloads those at or above a probability', async () => {
    const { page, api } = suite.rig;
    await page.getByRole('link', { name: 'Lists' }).click();
    await page.getByLabel('CSV file').setInputFiles({ name: 'campaign.csv', mimeType: 'text/csv', buffer: Buffer.from(LIST) });
    await page.getByRole('button', { name: 'Verify list' }).click();
    await page.getByRole('img', { name: /^Verdicts/ }).waitFor({ timeout: 45_000 });
    await page.getByRole('link', { name: 'Download all' }).waitFor();
    const id = /#\/lists\/(lst_[0-9a-f]+)$/.exec(page.url())?.[1];
    expect(listObject.parse(await (await api(`/v1/email-verify/lists/${id}`)).json()).status).toBe('completed');
    const apiCsv = Buffer.from(await (await api(`/v1/email-verify/lists/${id}/results?format=csv&columns=full`)).arrayBuffer());
    const [header = [], ...rows] = records(apiCsv);
    const at = (name: string) => header.lastIndexOf(name);

    // Beside the chart: each verdict's reasons, most frequent first, as the API's file counts them.
    const beside = page.getByRole('region', { name: 'Reasons by verdict' });
    for (const verdict of ['deliverable', 'risky', 'undeliverable']) {
      const counts = new Map<string, number>();
      for (const row of rows) if (row[at('verdict')] === verdict) counts.set(row[at('reason')]!, (counts.get(row[at('reason')]!) ?? 0) + 1);
      const expected = [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([reason, count]) => `${reason} ${count}`);
      if (expected.length === 0) await beside.getByRole('heading', { name: verdict, exact: true }).waitFor();
      else
        expect(await beside.getByRole('list', { name: verdict, exact: true }).getByRole('listitem').allTextContents(), verdict).toEqual(
          expected,
        );
    }
    const reasonOf = (address: string) => rows.find((row) => row[0] === address)?.[at('reason')];
    expect(reasonOf('gone0@unlikely.test')).toBe('known_bounce');
    expect(reasonOf('spam@likely.test')).toBe('complainer');

    // The catch-all addresses: the reported sends set their domains apart.
    const probability = (row: string[]) => Number(row[at('probability')]);
    const catchAll = rows.filter((row) => row[at('probability')] !== '');
    expect(catchAll.map((row) => row[0]).sort()).toEqual([...FRESH].sort());
    for (const row of catchAll) {
      expect(row[at('reason')], row[0]).toBe('accept_all');
      if (row[0]!.endsWith('@likely.test')) expect(probability(row), row[0]).toBeGreaterThan(0.5);
      else expect(probability(row), row[0]).toBeLessThan(0.5);
    }
    const bins = new Map<number, number>();
    for (const row of catchAll) {
      const bin = Math.min(9, Math.floor(Math.round(probability(row) * 100) / 10));
      bins.set(bin, (bins.get(bin) ?? 0) + 1);
    }
    const described = [...bins]
      .sort((a, b) => a[0] - b[0])
      .map(([bin, count]) => `${count} from ${(bin / 10).toFixed(1)} to ${((bin + 1) / 10).toFixed(1)}`);
    const spread = page.getByRole('img', { name: /^Probability spread/ });
    expect(await spread.getAttribute('aria-label')).toBe(
      `Probability spread of ${catchAll.length} catch-all addresses: ${described.join(', ')}`,
    );

    await page.getByLabel('Minimum probability').fill('0.5');
    await page.getByText(`5 of ${catchAll.length} catch-all addresses are at or above 0.50.`).waitFor();
    const above = await suite.download('Download catch-all addresses');
    expect([...above.subarray(0, 3)], 'a UTF-8 byte-order mark').toEqual([0xef, 0xbb, 0xbf]);
    expect(records(above)).toEqual([header, ...catchAll.filter((row) => probability(row) >= 0.5)]);
    expect(
      records(above)
        .slice(1)
        .map((row) => row[0]),
    ).toEqual(FRESH.filter((address) => address.endsWith('@likely.test')));

    await page.getByLabel('Minimum probability').fill('2');
    await page.getByText('Enter a probability from 0 to 1 (0.75, say).').waitFor();
    expect(await page.getByText('Download catch-all addresses').getAttribute('href')).toBeNull();
    await page.getByLabel('Minimum probability').fill('0');
    await page.getByText(`${catchAll.length} of ${catchAll.length} catch-all addresses are at or above 0.00.`).waitFor();
    expect(serious(await axe(page, 'list-catch-all'))).toEqual([]);
    await screenshots(page, 'list-catch-all');
    expect(suite.rig.problems).toEqual([]);
  });
});
