/**
 * The console's other pages in Chromium: served at /app without a key under a strict
 * Content-Security-Policy; sign-in (a wrong key shows the API's message; the key kept in the tab
 * only); the QR studio, whose preview is drawn in the page without a call and whose SVG and PNG
 * downloads (the only calls) scan back to the content; usage as the API
 * counts it; files the service would refuse, refused on the page with what to do (the headers
 * seen, for a file without addresses); an Excel workbook read in the page; and a history
 * longer than a page, every list of which can be reached.
 */
import { readFile } from 'node:fs/promises';
import { scanSvg } from '@svc/testkit';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axe, screenshots, serious } from './browser.ts';
import { scanPng, workbook, workbookBomb } from './exports.ts';
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

async function savedFile(label: string): Promise<{ name: string; bytes: Buffer }> {
  const [download] = await Promise.all([rig.page.waitForEvent('download'), rig.page.getByRole('button', { name: label }).click()]);
  return { name: download.suggestedFilename(), bytes: await readFile(await download.path()) };
}

describe('the console: pages', () => {
  it('is served at /app without a key, with a strict Content-Security-Policy and no inline script; / redirects there', async () => {
    const { baseUrl } = rig.product;
    expect(rig.product.output(), 'npm start says where the console is').toContain(`Web console: ${baseUrl}/app`);
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

  it('QR studio: the preview is drawn in the browser (no call, nothing billed); only downloads call the API, named after the content', async () => {
    const { page, api } = rig;
    const calls: string[] = [];
    const watch = (request: { url: () => string }) => {
      if (new URL(request.url()).pathname.startsWith('/v1/qr/')) calls.push(request.url());
    };
    page.on('request', watch);
    const before = z
      .object({ operations: z.record(z.string(), z.object({ calls: z.number() })) })
      .parse(await (await api('/v1/usage')).json());
    await page.getByRole('link', { name: 'QR studio' }).click();
    const content = 'https://example.com/console?from=browser&n=1';
    const preview = page.getByRole('img', { name: 'QR code preview' });
    await preview.waitFor();
    const previewSrc = await preview.getAttribute('src');
    await page.getByLabel('Content').fill(content);
    await page.getByLabel('Scale').fill('5');
    await page.getByLabel('Dark colour').fill('#1a3c6e');
    await expect.poll(() => preview.getAttribute('src')).not.toBe(previewSrc);
    // The preview is the code of the content, drawn from the product's encoder in the page.
    await expect.poll(async () => scanPng(await preview.screenshot())).toBe(content);
    await page.getByText(/Version \d+, \d+ × \d+ modules/).waitFor();
    expect(calls, 'opening the studio and typing call nothing').toEqual([]);

    // A refusal is the API's message, found without asking it.
    await page.getByLabel('Dark colour').fill('#eeeeee');
    await page
      .getByRole('alert')
      .filter({ hasText: /contrast/i })
      .waitFor();
    expect(await page.getByRole('button', { name: 'Download SVG' }).isDisabled()).toBe(true);
    await page.getByLabel('Dark colour').fill('#1a3c6e');
    await page.getByRole('alert').waitFor({ state: 'hidden' });
    expect(calls).toEqual([]);

    const svgFile = await savedFile('Download SVG');
    expect(svgFile.name).toBe('qr-example-com-console-from-browser-n-1.svg');
    const svg = svgFile.bytes.toString('utf8');
    expect(scanSvg(svg)).toBe(content);
    expect(calls).toHaveLength(1);
    expect(new URL(calls[0] ?? '').searchParams.get('dark')).toBe('#1a3c6e');
    const pngFile = await savedFile('Download PNG');
    expect(pngFile.name).toBe('qr-example-com-console-from-browser-n-1.png');
    const png = pngFile.bytes;
    expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
    const side = png.readUInt32BE(16);
    const modules = Number(/viewBox="0 0 (\d+) /.exec(svg)?.[1]);
    expect(side, 'a PNG for print').toBeGreaterThanOrEqual(1200);
    expect(side % modules, 'a whole number of pixels per module').toBe(0);
    expect(scanPng(png)).toBe(content);
    expect(calls).toHaveLength(2);
    expect(serious(await axe(page, 'qr-studio'))).toEqual([]);
    await screenshots(page, 'qr-studio');

    // The wifi form: the preview and the download hold the network's WIFI: payload.
    await page.getByRole('radio', { name: 'Wifi network' }).check();
    await page.getByLabel('Network name').fill('Café; "guests"');
    await page.getByRole('alert').filter({ hasText: '`password` is required with security=WPA.' }).waitFor();
    await page.getByLabel('Password').fill('correct-horse');
    await page.getByLabel('Hidden network').check();
    await page.getByRole('alert').waitFor({ state: 'hidden' });
    const payload = 'WIFI:T:WPA;S:Café\\; \\"guests\\";P:correct-horse;H:true;;';
    await expect.poll(async () => scanPng(await preview.screenshot())).toBe(payload);
    expect(calls).toHaveLength(2);
    const wifi = await savedFile('Download SVG');
    expect(wifi.name).toBe('qr-wifi-Café-guests.svg');
    expect(scanSvg(wifi.bytes.toString('utf8'))).toBe(payload);
    expect(calls.map((url) => new URL(url).pathname)).toEqual(['/v1/qr/qr', '/v1/qr/qr', '/v1/qr/wifi']);
    expect(serious(await axe(page, 'qr-studio-wifi'))).toEqual([]);
    page.off('request', watch);

    // Billed: the three downloads, nothing for looking.
    const after = z
      .object({ operations: z.record(z.string(), z.object({ calls: z.number() })) })
      .parse(await (await api('/v1/usage')).json());
    expect((after.operations['qr.generate']?.calls ?? 0) - (before.operations['qr.generate']?.calls ?? 0)).toBe(2);
    expect((after.operations['qr.wifi']?.calls ?? 0) - (before.operations['qr.wifi']?.calls ?? 0)).toBe(1);
  });

  it('usage: this month’s use, free allowance left, unit prices and cost per operation, and the total, as the API counts them', async () => {
    const { page, api } = rig;
    await page.getByRole('link', { name: 'Usage' }).click();
    const usage = z
      .object({
        operations: z.record(
          z.string(),
          z.object({ calls: z.number(), billableCalls: z.number(), freeRemaining: z.number(), costUsd: z.string() }),
        ),
        totalCostUsd: z.string(),
      })
      .parse(await (await api('/v1/usage')).json());
    await page.getByRole('table').waitFor();
    const cellsOf = (operation: string) =>
      page
        .getByRole('row', { name: new RegExp(`\\b${operation.replace('.', '\\.')}\\b`) })
        .getByRole('cell')
        .allTextContents();
    const prices: Record<string, string> = {
      'email-verify.batch': '$0.15 per call',
      'email-verify.single': '$0.003 per call',
      'qr.generate': '$0.0005 per code',
      'qr.wifi': '$0.0005 per code',
      'email-verify.list': '$0.15 per 100 distinct addresses',
    };
    for (const [operation, row] of Object.entries(usage.operations)) {
      const cells = await cellsOf(operation);
      expect(cells[2], operation).toBe(prices[operation]);
      expect(cells[3], operation).toBe(String(row.billableCalls));
      expect(cells.at(-1), operation).toBe(`$${row.costUsd}`);
    }
    expect((await cellsOf('qr.generate'))[0]).toBe(`${usage.operations['qr.generate']?.calls} codes`);
    expect((await cellsOf('email-verify.batch'))[1]).toMatch(
      new RegExp(`^${usage.operations['email-verify.batch']?.freeRemaining} units?\\b`),
    );
    // The batch allowance is shown once: lists draw on it.
    expect((await cellsOf('email-verify.list'))[1]).toBe('shared with batches');
    expect((await cellsOf('email-verify.list'))[0]).toMatch(/units? of 100 addresses/);
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
        says: 'No column of this file holds email addresses (columns found: Name, Phone)',
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

  it('reads an Excel workbook’s first sheet like a CSV, in the page; refuses a zip bomb before inflating it', async () => {
    const { page, api } = rig;
    const rows = [
      ['First Name', 'Company', 'E-mail Address', 'Phone'],
      ['Åsa', 'Smørrebrød ApS', 'asa@shop.test', '+45 1234'],
      ['Bo', 'Café Crème', 'BO@SHOP.TEST', ''],
      ['', '', '', ''],
      ['Bo', 'Café Crème', 'bo@shop.test', ''],
      ['Cy', '<b>bold</b>', 'cy@catch.test', ''],
    ];
    await page.getByLabel('CSV file').setInputFiles({
      name: 'contacts.xlsx',
      mimeType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
      buffer: workbook(rows),
    });
    const column = page.getByLabel('Address column');
    await column.waitFor();
    expect(await column.locator('option:checked').textContent()).toBe('E-mail Address');
    await page.getByText('Detected address column: E-mail Address (by its header); read as Excel workbook.').waitFor();
    await page.getByRole('cell', { name: 'Smørrebrød ApS', exact: true }).waitFor();
    await page.getByRole('cell', { name: '<b>bold</b>', exact: true }).waitFor();
    expect(await page.getByRole('cell', { name: 'not@this.sheet' }).count(), 'the first sheet only').toBe(0);
    // Duplicates by the contracts' rule: BO@SHOP.TEST and bo@shop.test are one address.
    await page.getByText(/^4 addresses, 3 distinct\. Price: \$/).waitFor();
    expect(serious(await axe(page, 'lists-upload-xlsx'))).toEqual([]);

    const bomb = workbookBomb(200 * 1024 * 1024);
    await page.getByLabel('CSV file').setInputFiles({ name: 'bomb.xlsx', mimeType: 'application/octet-stream', buffer: bomb });
    await page.getByRole('alert').filter({ hasText: 'This workbook inflates to more than 128 MiB' }).waitFor();
    expect(await page.getByRole('button', { name: 'Verify list' }).count()).toBe(0);
    expect(listPage.parse(await (await api('/v1/email-verify/lists')).json()).lists).toEqual([]);

    // The workbook itself is sent: the service reads the same column of the same sheet.
    await page
      .getByLabel('CSV file')
      .setInputFiles({ name: 'contacts.xlsx', mimeType: 'application/octet-stream', buffer: workbook(rows) });
    await page.getByRole('button', { name: 'Verify list' }).click();
    await page.getByRole('progressbar').waitFor();
    const [created] = listPage.parse(await (await api('/v1/email-verify/lists')).json()).lists;
    const list = z
      .object({ count: z.number(), distinct: z.number(), column: z.object({ header: z.string() }) })
      .parse(await (await api(`/v1/email-verify/lists/${created?.id}`)).json());
    expect(list).toMatchObject({ count: 4, distinct: 3, column: { header: 'E-mail Address' } });
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
