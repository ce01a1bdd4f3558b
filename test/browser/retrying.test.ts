/**
 * A list whose stragglers wait for a retry, as the console shows it in Chromium: how many wait
 * and why, when the next retry is, the settled rows downloadable while it waits, and `Finish
 * now`, which settles the waiting ones as risky (with the reason they waited for) and completes
 * the list. The rig's grey.test greylists every recipient for an hour, and the retry delays are
 * long, so the list sits `retrying` until the person finishes it.
 */
import { reasonSentence } from '@svc/contracts';
import { describe, expect, it } from 'vitest';
import { axe, screenshots, serious } from './browser.ts';
import { listObject } from './setup.ts';
import { records, signedInConsole } from './signed-in.ts';

const KNOWN = Array.from({ length: 8 }, (_, i) => `known${i}@shop.test`);
const GREY = Array.from({ length: 4 }, (_, i) => `later${i}@grey.test`);
const FILE = `\ufeffName,Email\r\n${[...KNOWN, ...GREY].map((address, i) => `Smørrebrød ApS ${i},${address}`).join('\r\n')}\r\n`;

const suite = signedInConsole(
  KNOWN,
  { shop: '127.0.0.86', catch: '127.0.0.87', slow: '127.0.0.88' },
  { LIST_RETRY_DELAYS_S: '600,1200' },
  { 'grey.test': { host: '127.0.0.89', users: GREY, greylist: { minDelayMs: 3_600_000 } } },
);
const { download } = suite;

describe('the console: a list that waits for retries', () => {
  it('says how many wait, why and when the next retry is; offers the settled rows; Finish now completes it', async () => {
    const { page, api } = suite.rig;
    await page.getByLabel('CSV file').setInputFiles({ name: 'day.csv', mimeType: 'text/csv', buffer: Buffer.from(FILE) });
    await page.getByLabel('List name').fill('day');
    await page.getByRole('button', { name: 'Verify list' }).click();
    const panel = page.getByRole('region', { name: 'Waiting for retries' });
    await panel.waitFor({ timeout: 30_000 });
    await page.getByText(/^Status: retrying\./).waitFor();
    const id = /#\/lists\/(lst_[0-9a-f]+)$/.exec(page.url())?.[1];
    const list = listObject.parse(await (await api(`/v1/email-verify/lists/${id}`)).json());
    expect(list.status).toBe('retrying');
    await panel.getByText(`${GREY.length} addresses wait for a retry`).waitFor();
    await panel.getByText(/^Next retry at \d\d:\d\d \((in .+|any moment now)\)\.$/).waitFor();

    // The settled rows, downloadable now: the known mailboxes, the mark kept.
    const settled = await download('Download all');
    expect([...settled.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const [header, ...rows] = records(settled);
    expect(header?.slice(0, 4)).toEqual(['Name', 'Email', 'verdict', 'score']);
    expect(rows.filter((row) => row[2] === 'deliverable').map((row) => row[1])).toEqual(KNOWN);
    expect(rows[0]?.[0], 'accents as uploaded').toBe('Smørrebrød ApS 0');
    expect(serious(await axe(page, 'list-retrying'))).toEqual([]);
    await screenshots(page, 'list-retrying');

    await panel.getByRole('button', { name: 'Finish now' }).click();
    await page.getByText(/^Status: completed\./).waitFor({ timeout: 20_000 });
    await panel.waitFor({ state: 'hidden' });
    const done = listObject.parse(await (await api(`/v1/email-verify/lists/${id}`)).json());
    expect(done.summary).toEqual({ deliverable: KNOWN.length, risky: GREY.length, undeliverable: 0 });
    const reasons = page.getByRole('region', { name: 'Reasons, most frequent first' });
    const grey = await reasons
      .getByRole('row', { name: /^greylisted / })
      .getByRole('cell')
      .allTextContents();
    expect(grey).toEqual([
      String(GREY.length),
      `${((GREY.length * 100) / (KNOWN.length + GREY.length)).toFixed(1)} %`,
      reasonSentence('greylisted'),
    ]);
    const [, ...all] = records(await download('Download all'));
    expect(all.map((row) => [row[1], row[2], row[4]])).toEqual([
      ...KNOWN.map((address) => [address, 'deliverable', 'accepted_email']),
      ...GREY.map((address) => [address, 'risky', 'greylisted']),
    ]);
    expect(suite.rig.problems).toEqual([]);
  });
});
