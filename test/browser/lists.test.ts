/**
 * The console's lists, as a person cleaning a CRM export uses them in Chromium: sign in, choose
 * the file, see the column the console found and the price before anything is billed, verify,
 * watch the progress to the end, read the chart, the counts with their shares and the legend of
 * reasons, download each file and find in it exactly what the API returns (full form, byte-order
 * mark kept); then the history, where a running list is cancelled (after a
 * confirming dialog).
 */
import { ACTIONS, FULL_RESULT_COLUMNS, neutraliseCell, reasonSentence } from '@svc/contracts';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { axe, screenshots, serious } from './browser.ts';
import { crmExport, HOSTILE, knownUsers } from './exports.ts';
import { listObject, listPage } from './setup.ts';
import { records, signedInConsole } from './signed-in.ts';

const DISTINCT = 240;
const file = crmExport(DISTINCT);
const LIST_NAME = '<b>Q4</b> "leads" <script>alert("name")</script>';

const suite = signedInConsole(knownUsers(DISTINCT), { shop: '127.0.0.93', catch: '127.0.0.94', slow: '127.0.0.95' });
const { download } = suite;

describe('the console: lists', () => {
  it('reads a CRM export: the address column found by its header, the rows as text, the price before anything is billed', async () => {
    const { page, api } = suite.rig;
    await page.getByLabel('CSV file').setInputFiles({ name: 'crm-export.csv', mimeType: 'text/csv', buffer: Buffer.from(file.text) });
    const column = page.getByLabel('Address column');
    await column.waitFor();
    expect(await column.locator('option:checked').textContent()).toBe('Work Email');
    await page.getByText('Detected address column: Work Email (by its header); read as UTF-8.').waitFor();
    for (const cell of HOSTILE) await page.getByRole('cell', { name: cell, exact: true }).first().waitFor();
    expect(await page.locator('main img, main b, main script').count(), 'no cell became markup').toBe(0);
    // The price after the key's free units left this month (batches and lists share them), and without them.
    const free = z
      .object({ operations: z.object({ 'email-verify.list': z.object({ freeRemaining: z.number() }) }) })
      .parse(await (await api('/v1/usage')).json()).operations['email-verify.list'].freeRemaining;
    const billed = Math.max(0, 3 - free);
    await page
      .getByText(
        `${DISTINCT + 1} addresses, ${DISTINCT} distinct. Price: $${(billed * 0.15).toFixed(2)} (3 units of 100 distinct addresses at the batch price; ${Math.min(3, free)} of your ${free} free units left this month are used first; $0.45 without the free allowance).`,
      )
      .waitFor();

    // By keyboard: the arrow keys move the choice to the next column (Phone), and back.
    await column.focus();
    await page.keyboard.press('ArrowDown');
    await page.getByText('This column holds no addresses').waitFor();
    expect(await column.locator('option:checked').textContent()).toBe('Phone');
    expect(await page.getByRole('button', { name: 'Verify list' }).isDisabled()).toBe(true);
    await page.keyboard.press('ArrowUp');
    expect(await column.locator('option:checked').textContent()).toBe('Work Email');
    expect(await page.getByRole('button', { name: 'Verify list' }).isEnabled()).toBe(true);

    const lists = await (await api('/v1/email-verify/lists')).json();
    expect(lists, 'nothing was sent yet').toMatchObject({ lists: [] });
    expect(serious(await axe(page, 'lists-upload'))).toEqual([]);
    await screenshots(page, 'lists-upload');
  });

  it('verifies it: progress to the end, the chart and counts of the API, four downloads equal to its results', async () => {
    const { page, api } = suite.rig;
    await page.getByLabel('List name').fill(LIST_NAME);
    // Tab from the name reaches Verify list; Enter presses it.
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    const bar = page.getByRole('progressbar');
    await bar.waitFor();
    const seen: number[] = [];
    let shot = false;
    const chart = page.getByRole('img', { name: /^Verdicts/ });
    // Until the chart shows (the list ended), each poll records the progress shown.
    await expect
      .poll(
        async () => {
          const now = Number(await bar.getAttribute('aria-valuenow'));
          if (seen.at(-1) !== now) seen.push(now);
          if (now > 0 && now < 50 && !shot) shot = await screenshots(page, 'list-progress').then(() => true);
          return chart.count();
        },
        { timeout: 45_000, interval: 50, message: 'the list ends' },
      )
      .toBeGreaterThan(0);
    seen.push(Number(await bar.getAttribute('aria-valuenow')));
    expect(seen[0], 'progress was seen before the end').toBeLessThan(100);
    expect(seen.at(-1)).toBe(100);
    expect(
      [...seen].sort((a, b) => a - b),
      'progress never goes back',
    ).toEqual(seen);
    expect(await page.getByRole('heading', { level: 1 }).textContent(), 'the list name is text').toBe(LIST_NAME);
    await page.getByText(/^Status: completed\./).waitFor();

    const id = /#\/lists\/(lst_[0-9a-f]+)$/.exec(page.url())?.[1];
    const list = listObject.parse(await (await api(`/v1/email-verify/lists/${id}`)).json());
    const { deliverable, risky, undeliverable } = list.summary;
    expect(await chart.getAttribute('aria-label')).toBe(
      `Verdicts: ${deliverable} deliverable, ${risky} risky, ${undeliverable} undeliverable`,
    );
    const counts = await page.locator('dl.counts').innerText();
    for (const [verdict, count] of Object.entries(list.summary)) expect(counts).toMatch(new RegExp(`${verdict}\\s+${count}\\b`));

    // The downloads are the API's full form, byte for byte: the byte-order mark kept (Excel on Windows reads accents by it).
    const apiCsv = Buffer.from(await (await api(`/v1/email-verify/lists/${id}/results?format=csv&columns=full`)).arrayBuffer());
    const all = await download('Download all');
    expect(all.equals(apiCsv), 'Download all is the API’s file').toBe(true);
    expect([...all.subarray(0, 3)], 'a UTF-8 byte-order mark').toEqual([0xef, 0xbb, 0xbf]);
    const [header, ...rows] = records(all);
    expect(header).toEqual([...file.header, ...FULL_RESULT_COLUMNS]);
    expect(rows.map((row) => row.slice(0, 6))).toEqual(file.rows.map((row) => row.cells.map(neutraliseCell)));
    expect(rows.map((row) => row[6])).toEqual(file.rows.map((row) => row.verdict));
    expect(rows.map((row) => row[10])).toEqual(file.rows.map((row) => ACTIONS[row.verdict]));
    expect(rows.at(-1)?.[11], 'the repeated address is flagged').toContain('duplicate');
    for (const verdict of ['deliverable', 'risky', 'undeliverable'] as const) {
      const saved = await download(`Download ${verdict}`);
      expect([...saved.subarray(0, 3)], verdict).toEqual([0xef, 0xbb, 0xbf]);
      expect(records(saved), verdict).toEqual([header, ...rows.filter((row) => row[6] === verdict)]);
    }

    // The legend: each verdict's share, each reason's count with its sentence.
    const verified = deliverable + risky + undeliverable;
    for (const [verdict, count] of Object.entries(list.summary)) {
      const share = `${((count * 100) / verified).toFixed(1)} %`;
      expect(counts).toContain(`${count} (${share})`);
      await page
        .getByRole('region', { name: /^Verdicts: share/ })
        .getByRole('row', { name: new RegExp(`^${verdict} ${count} ${share.replace('.', '\\.')} `) })
        .waitFor();
    }
    const reasons = new Map<string, number>();
    for (const row of rows) if (row[8] !== undefined && row[8] !== '') reasons.set(row[8], (reasons.get(row[8]) ?? 0) + 1);
    expect(reasons.size).toBeGreaterThan(1);
    const reasonTable = page.getByRole('region', { name: 'Reasons, most frequent first' });
    for (const [reason, count] of reasons) {
      const cells = await reasonTable
        .getByRole('row', { name: new RegExp(`^${reason} `) })
        .getByRole('cell')
        .allTextContents();
      expect(cells[0], reason).toBe(String(count));
      expect(cells[2], reason).toBe(reasonSentence(reason));
    }
    expect(serious(await axe(page, 'list-results'))).toEqual([]);
    await screenshots(page, 'list-day-results');
  });

  it('lists the key’s lists: reopens one by its name, cancels a running one with Cancel', async () => {
    const { page, api } = suite.rig;
    const slow = `email,name\r\n${Array.from({ length: 40 }, (_, i) => `wait${i}@slow.test,Slow ${i}`).join('\r\n')}\r\n`;
    await page.getByRole('link', { name: 'Lists' }).click();
    await page.getByLabel('CSV file').setInputFiles({ name: 'slow.csv', mimeType: 'text/csv', buffer: Buffer.from(slow) });
    await page.getByRole('button', { name: 'Verify list' }).click();
    await page.getByRole('progressbar').waitFor();
    await page.getByRole('link', { name: 'Lists' }).click();

    // Every DELETE of a list the console sends: declining must send none.
    const deletes: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'DELETE' && request.url().includes('/lists/')) deletes.push(request.url());
    });
    const running = page.getByRole('row', { name: /^slow\b/ });
    const slowId = listPage.parse(await (await api('/v1/email-verify/lists')).json()).lists[0]?.id;
    // Cancel asks first; declining (the focused choice) leaves the list running.
    await running.getByRole('button', { name: 'Cancel' }).click();
    const dialog = page.getByRole('dialog', { name: 'Cancel “slow”?' });
    await dialog.waitFor();
    await dialog.getByText('never be verified nor billed').waitFor();
    expect(serious(await axe(page, 'cancel-confirm'))).toEqual([]);
    await page.keyboard.press('Enter');
    await dialog.waitFor({ state: 'detached' });
    await running.getByRole('button', { name: 'Cancel' }).waitFor();
    expect(listObject.parse(await (await api(`/v1/email-verify/lists/${slowId}`)).json()).status).not.toBe('cancelled');
    await running.getByRole('button', { name: 'Cancel' }).click();
    await dialog.getByRole('button', { name: 'Cancel list' }).click();
    await expect
      .poll(async () => listObject.parse(await (await api(`/v1/email-verify/lists/${slowId}`)).json()).status, { timeout: 10_000 })
      .toBe('cancelled');
    // Requests are seen in the order sent: had declining sent a DELETE, it would be seen before this
    // one. Polled: the browser's request event can reach the test after the API already says cancelled.
    await expect
      .poll(() => deletes, { message: 'one DELETE, from confirming; none from declining', timeout: 5_000 })
      .toEqual([expect.stringContaining(`/lists/${slowId}`)]);
    await page.reload();
    await page.getByRole('row', { name: /^slow\b.*cancelled/ }).waitFor();
    expect(serious(await axe(page, 'lists-history'))).toEqual([]);
    await screenshots(page, 'lists-history');

    // The cancelled list's file keeps every uploaded row: those never verified say not_verified.
    await page.getByRole('link', { name: 'slow', exact: true }).click();
    const [header, ...rows] = records(await download('Download all'));
    expect(header?.slice(0, 6)).toEqual(['email', 'name', 'verdict', 'score', 'reason', 'did_you_mean']);
    expect(rows.map((row) => row[0])).toEqual(Array.from({ length: 40 }, (_, i) => `wait${i}@slow.test`));
    const unverified = rows.filter((row) => row[2] === '');
    expect(unverified.length).toBeGreaterThan(0);
    expect(unverified.every((row) => row[4] === 'not_verified')).toBe(true);
    const cells = await page
      .getByRole('region', { name: 'Reasons, most frequent first' })
      .getByRole('row', { name: /^not_verified / })
      .getByRole('cell')
      .allTextContents();
    expect(cells[0]).toBe(String(unverified.length));
    expect(cells[2]).toBe(reasonSentence('not_verified'));

    await page.getByRole('link', { name: 'Lists' }).click();
    await page.getByRole('link', { name: LIST_NAME, exact: true }).click();
    await page.getByRole('img', { name: /^Verdicts/ }).waitFor();
    expect(suite.rig.problems).toEqual([]);
  });
});
