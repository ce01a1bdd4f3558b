/**
 * What each browser test file starts: the rig's mail servers (shop.test knows some mailboxes and
 * answers one recipient at a time, catch.test accepts every address, slow.test takes its time),
 * the product as a real process in embedded mode (`scripts/start.ts`, which builds the console
 * when missing), and one Chromium page that records what must never happen.
 */
import type { Browser, Page } from 'playwright-core';
import { z } from 'zod';
import { startMultiRig, type MultiRig } from '../lists/harness.ts';
import { startEmbeddedProduct, type Product } from '../lists/products.ts';
import { launch, watchedPage } from './browser.ts';

export interface ConsoleRig {
  product: Product;
  page: Page;
  problems: string[];
  /** A call of the API with the product's key, as the console makes it. */
  api: (path: string, init?: RequestInit) => Promise<Response>;
  /** Opens /app and signs in with the product's key. */
  signIn: () => Promise<void>;
  close(): Promise<void>;
}

export async function startConsoleRig(
  known: string[],
  hosts: { shop: string; catch: string; slow: string },
  env: Record<string, string> = {},
  /** More mail domains of the rig (a greylisting one, say). */
  extra: Parameters<typeof startMultiRig>[0] = {},
): Promise<ConsoleRig> {
  const rig: MultiRig = await startMultiRig({
    ...extra,
    // One RCPT at a time, 60 ms each: a list of a few hundred runs for seconds, long enough to watch.
    'shop.test': { host: hosts.shop, users: known, pipelining: false, replyDelayMs: 60 },
    'catch.test': { host: hosts.catch, catchAll: true },
    'slow.test': { host: hosts.slow, users: [], pipelining: false, replyDelayMs: 300 },
  });
  let product: Product | undefined;
  let browser: Browser | undefined;
  const close = async () => {
    await browser?.close();
    await product?.close();
    await rig.close();
  };
  try {
    product = await startEmbeddedProduct({ ...rig.env, LIST_RETRY_DELAYS_S: '', VERIFY_RESULT_CACHE_TTL_S: '0', ...env });
    browser = await launch();
    const { page, problems } = await watchedPage(browser, product.baseUrl);
    const { baseUrl, key } = product;
    const api = (path: string, init: RequestInit = {}) =>
      fetch(`${baseUrl}${path}`, { ...init, headers: { ...init.headers, authorization: `Bearer ${key}` } });
    const signIn = async () => {
      await page.goto(`${baseUrl}/app/`);
      await page.getByLabel('API key').fill(key);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Lists', level: 1 }).waitFor();
    };
    return { product, page, problems, api, signIn, close };
  } catch (error) {
    await close();
    throw error;
  }
}

export const errorBody = z.object({ error: z.string(), message: z.string() });

export const listObject = z.object({
  id: z.string(),
  name: z.string().nullable(),
  status: z.string(),
  count: z.number(),
  distinct: z.number(),
  processed: z.number(),
  summary: z.object({ deliverable: z.number(), risky: z.number(), undeliverable: z.number() }),
});

export const listPage = z.object({ lists: z.array(listObject) });

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
