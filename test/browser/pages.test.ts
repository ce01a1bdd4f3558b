/**
 * The console's other pages in Chromium: served at /app without a key under a strict
 * Content-Security-Policy; sign-in (a wrong key shows the API's message; the key kept in the tab
 * only); the QR studio, whose SVG and PNG downloads scan back to the content; usage as the API
 * counts it; files the service would refuse, refused on the page with what to do; and a history
 * longer than a page, every list of which can be reached.
 */
import { readFile } from 'node:fs/promises';
import { scanSvg } from '@svc/testkit';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axe, screenshots, serious } from './browser.ts';
import { scanPng } from './exports.ts';
import { errorBody, listObject, listPage, startConsoleRig, type ConsoleRig } from './setup.ts';

let rig: ConsoleRig;
beforeAll(async () => {
  // Lists are created many at once by the history test: no creation rate or active-list limit in the way.
  rig = await startConsoleRig(
    [],
    { shop: '127.0.0.96', catch: '127.0.0.97', slow: '127.0.0.98' },
    { RATE_LIMIT_EMAIL_VERIFY_LIST: '0', LIST_MAX_ACTIVE_PER_KEY: '100' },
  );
}, 120_000);
afterAll(async () => {
  await rig?.close();
});

async function saved(label: string): Promise<Buffer> {
  const [download] = await Promise.all([rig.page.waitForEvent('download'), rig.page.getByRole('button', { name: label }).click()]);
  return readFile(await download.path());
}

describe('the console: pages', () => {
  it('is served at /app without a key, with a strict Content-Security-Policy and no inline script; / redirects there', async () => {
    const { baseUrl } = rig.product;
    const root = await fetch(`${baseUrl}/`, { redirect: 'manual' });
    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe('/app/');
    const app = await fetch(`${baseUrl}/app/`);
    expect(app.status).toBe(200);
    const csp = app.headers.get('content-security-policy') ?? '';
    for (const directive of ["default-src 'self'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"])
      expect(csp).toContain(directive);
    expect(csp).not.toContain('unsafe');
    const html = await app.text();
    expect(html, 'every script is a file of this origin').not.toMatch(/<script(?![^>]*\ssrc="\/app\/)[^>]*>/);
    for (const [, asset] of html.matchAll(/(?:src|href)="(\/app\/assets\/[^"]+)"/g)) {
      const response = await fetch(`${baseUrl}${asset}`);
      expect(response.status, asset).toBe(200);
      expect(response.headers.get('content-security-policy'), asset).toBe(csp);
    }
  });

  it('shows the API’s message for a wrong key; signs in by keyboard and keeps the key in the tab only', async () => {
    const { page, product } = rig;
    const wrong = `sk_${'x'.repeat(32)}`;
    const refusal = errorBody.parse(
      await (await fetch(`${product.baseUrl}/v1/usage`, { headers: { authorization: `Bearer ${wrong}` } })).json(),
    );
    await page.goto(`${product.baseUrl}/`);
    expect(page.url()).toBe(`${product.baseUrl}/app/`);
    await page.getByLabel('API key').fill(wrong);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: refusal.message }).waitFor();
    expect(await page.getByRole('alert').textContent()).toBe(refusal.message);
    expect(serious(await axe(page, 'sign-in'))).toEqual([]);
    await screenshots(page, 'sign-in');

    // The field has the focus again after a refusal: type the key and press Enter.
    await page.keyboard.press('Control+A');
    await page.keyboard.type(product.key);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Lists', level: 1 }).waitFor();
    expect(await page.evaluate('JSON.stringify([sessionStorage.length, localStorage.length, document.cookie])')).toBe('[1,0,""]');
    expect(page.url()).not.toContain(product.key);
  });

  it('QR studio: a live preview, and SVG and PNG downloads that scan back to the content; refusals show the API’s message', async () => {
    const { page } = rig;
    await page.getByRole('link', { name: 'QR studio' }).click();
    const content = 'https://example.com/console?from=browser&n=1';
    const preview = page.getByRole('img', { name: 'QR code preview' });
    await preview.waitFor();
    await Promise.all([
      page.waitForResponse((response) => response.url().includes('from%3Dbrowser')),
      page.getByLabel('Content').fill(content),
    ]);
    await page.getByLabel('Scale').fill('5');
    await Promise.all([
      page.waitForResponse((response) => response.url().includes('dark=%231a3c6e')),
      page.getByLabel('Dark colour').fill('#1a3c6e'),
    ]);
    await page.getByRole('button', { name: 'Download SVG' }).isEnabled();
    const svg = (await saved('Download SVG')).toString('utf8');
    expect(scanSvg(svg)).toBe(content);
    const png = await saved('Download PNG');
    expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
    expect(png.readUInt32BE(16), 'the PNG has the SVG’s pixel size').toBe(Number(/width="(\d+)"/.exec(svg)?.[1]));
    expect(scanPng(png)).toBe(content);
    expect(serious(await axe(page, 'qr-studio'))).toEqual([]);
    await screenshots(page, 'qr-studio');

    await page.getByLabel('Dark colour').fill('#eeeeee');
    await page
      .getByRole('alert')
      .filter({ hasText: /contrast/i })
      .waitFor();
    await page.getByLabel('Dark colour').fill('#000000');
    await page.getByRole('alert').waitFor({ state: 'hidden' });
  });

  it('usage: this month’s calls and cost per operation, as the API counts them', async () => {
    const { page, api } = rig;
    await page.getByRole('link', { name: 'Usage' }).click();
    const usage = z
      .object({ operations: z.record(z.string(), z.object({ calls: z.number(), costUsd: z.string() })), totalCostUsd: z.string() })
      .parse(await (await api('/v1/usage')).json());
    await page.getByRole('table').waitFor();
    for (const [operation, row] of Object.entries(usage.operations)) {
      const cells = await page
        .getByRole('row', { name: new RegExp(`^${operation.replace('.', '\\.')}\\b`) })
        .getByRole('cell')
        .allTextContents();
      expect(cells[0], operation).toBe(String(row.calls));
      expect(cells.at(-1), operation).toBe(`$${row.costUsd}`);
    }
    expect(usage.operations['qr.generate']?.calls).toBeGreaterThan(0);
    await page.getByRole('row', { name: `Total this month $${usage.totalCostUsd}` }).waitFor();
    expect(serious(await axe(page, 'usage'))).toEqual([]);
    await screenshots(page, 'usage');
  });

  it('refuses on the page, saying what to do, a binary file, a file with no address column and one over 16 MiB; no list is created', async () => {
    const { page, api } = rig;
    await page.getByRole('link', { name: 'Lists' }).click();
    const files = [
      {
        name: 'photo.csv',
        buffer: Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0x00, 0x00, 0x00, 0x08, 0x00, 0xff, 0xd8]),
        says: 'This is not a text file',
      },
      {
        name: 'phones.csv',
        buffer: Buffer.from('Name,Phone\r\nAnn,+1 555 0100\r\nBob,+1 555 0101\r\n'),
        says: 'No column of this file holds email addresses',
      },
      { name: 'huge.csv', buffer: Buffer.alloc(17 * 1024 * 1024, 'a@b.test\n'), says: 'larger than 16 MiB' },
    ];
    for (const file of files) {
      await page.getByLabel('CSV file').setInputFiles({ ...file, mimeType: 'text/csv' });
      await page.getByRole('alert').filter({ hasText: file.says }).waitFor();
      expect(await page.getByRole('button', { name: 'Verify list' }).count(), file.name).toBe(0);
    }
    expect(listPage.parse(await (await api('/v1/email-verify/lists')).json()).lists).toEqual([]);
    expect(rig.problems).toEqual([]);
  });

  it('the history reaches every list of the key, not the latest page only: older ones come on request and reopen', async () => {
    const { page, api } = rig;
    const ids: string[] = [];
    for (let i = 1; i <= 23; i += 1) {
      const created = await api('/v1/email-verify/lists', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ emails: [`someone${i}@catch.test`], name: `old-${i}` }),
      });
      expect(created.status).toBe(202);
      ids.push(listObject.parse(await created.json()).id);
    }
    await expect
      .poll(
        async () => {
          const statuses = await Promise.all(
            ids.map(async (id) => listObject.parse(await (await api(`/v1/email-verify/lists/${id}`)).json()).status),
          );
          return statuses.every((status) => status === 'completed');
        },
        { timeout: 20_000 },
      )
      .toBe(true);
    await page.getByRole('link', { name: 'Lists' }).click();
    await page.reload();
    const history = page.getByRole('region', { name: 'History, newest first' });
    const named = history.getByRole('row', { name: /^old-\d+\b/ });
    await history.getByRole('link', { name: 'old-23', exact: true }).waitFor();
    expect(await named.count()).toBe(20);
    await page.getByRole('button', { name: 'Show older lists' }).click();
    await history.getByRole('link', { name: 'old-1', exact: true }).waitFor();
    expect(await named.count()).toBe(23);
    await expect.poll(() => page.getByRole('button', { name: 'Show older lists' }).isVisible()).toBe(false);

    await history.getByRole('link', { name: 'old-1', exact: true }).click();
    await page.getByRole('img', { name: /^Verdicts/ }).waitFor();
    expect(rig.problems).toEqual([]);
  });
});
