/**
 * Debian's Chromium driven by playwright-core (no browser download), with what the console tests
 * check on every page: no request leaves the gateway's origin, no Content-Security-Policy
 * violation, no dialog (a script a hostile cell smuggled in would open one), axe-core's
 * accessibility rules, and screenshots at a laptop's and a phone's width: into .tmp/console/
 * (ignored by git), or into docs/console/, which docs/console.md shows, with UPDATE_SCREENSHOTS=1.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium, type Browser, type LaunchOptions, type Page } from 'playwright-core';
import { z } from 'zod';

export const CHROMIUM = '/usr/bin/chromium';
const ROOT = join(import.meta.dirname, '..', '..');
/** A plain run leaves the tracked screenshots alone: a test run must not modify the tree. */
export const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? join(ROOT, 'docs', 'console') : join(ROOT, '.tmp', 'console');

export const VIEWPORTS = { laptop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;

/** `options` adds to the launch (a script with its own Ctrl-C handling turns playwright's off: `handleSIGINT: false`). */
export async function launch(options: Omit<LaunchOptions, 'executablePath' | 'args'> = {}): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `No Chromium at ${CHROMIUM}: install Debian's package (apt-get install chromium), as .ci/run does. The browser tests never download one.`,
    );
  return chromium.launch({
    ...options,
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

export interface Watched {
  page: Page;
  /** Requests to another origin, CSP violations, dialogs and page errors seen so far. */
  problems: string[];
}

/** A page that records what must never happen. */
export async function watchedPage(browser: Browser, baseUrl: string): Promise<Watched> {
  const context = await browser.newContext({ viewport: VIEWPORTS.laptop, acceptDownloads: true });
  const page = await context.newPage();
  const problems: string[] = [];
  const origin = new URL(baseUrl).origin;
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (!['data:', 'blob:'].includes(url.protocol) && url.origin !== origin) problems.push(`request to ${request.url()}`);
  });
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) problems.push(`CSP: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('dialog', (dialog) => {
    problems.push(`dialog: ${dialog.message()}`);
    void dialog.dismiss();
  });
  return { page, problems };
}

const violationsSchema = z.array(z.object({ id: z.string(), impact: z.string().nullable(), help: z.string(), nodes: z.number() }));
export type Violations = z.infer<typeof violationsSchema>;

let axeSource: string | undefined;

/** axe-core's WCAG 2.x A/AA rules on the page as it is; its source is evaluated through the devtools protocol, which the page's CSP does not govern. */
export async function axe(page: Page, label: string): Promise<Violations> {
  axeSource ??= await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  if (!(await page.evaluate('typeof window.axe !== "undefined"'))) await page.evaluate(axeSource);
  const found: unknown = await page.evaluate(`axe.run(document, { runOnly: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] })
    .then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact ?? null, help: v.help, nodes: v.nodes.length })))`);
  const violations = violationsSchema.parse(found);
  // Printed for the record (docs/console.md quotes it): minor and moderate findings do not fail the run.
  console.log(
    `[axe] ${label}: ${violations.length === 0 ? 'no violations' : violations.map((v) => `${v.id} (${v.impact ?? '?'}, ${v.nodes})`).join(', ')}`,
  );
  return violations;
}

export const serious = (violations: Violations): Violations =>
  violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');

/** The page at a laptop's and a phone's width, full length, as <SCREENSHOTS>/<name>-<width>.png; back to the laptop width after. */
export async function screenshots(page: Page, name: string): Promise<void> {
  for (const [width, size] of Object.entries(VIEWPORTS)) {
    await page.setViewportSize(size);
    await page.screenshot({ path: join(SCREENSHOTS, `${name}-${width}.png`), fullPage: true, animations: 'disabled' });
  }
  await page.setViewportSize(VIEWPORTS.laptop);
}
