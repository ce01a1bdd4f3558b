/**
 * The setup the list pages' browser tests share: a console rig started before the file's tests
 * and signed in (setup.ts), closed after them; the results files the page offers, downloaded by
 * their link's name; and a CSV read back as rows (byte-order mark dropped, rows of any width).
 */
import { readFile } from 'node:fs/promises';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll } from 'vitest';
import { startConsoleRig, type ConsoleRig } from './setup.ts';

export interface SignedIn {
  /** The rig, once beforeAll has started it. */
  readonly rig: ConsoleRig;
  /** The file behind the link named `label`, as saved by the browser. */
  download: (label: string) => Promise<Buffer>;
}

/** Registers the file's beforeAll and afterAll: the rig of startConsoleRig(...args), signed in. */
export function signedInConsole(...args: Parameters<typeof startConsoleRig>): SignedIn {
  let started: ConsoleRig | undefined;
  beforeAll(async () => {
    started = await startConsoleRig(...args);
    await started.signIn();
  }, 120_000);
  afterAll(async () => {
    await started?.close();
  });
  const suite: SignedIn = {
    get rig() {
      if (started === undefined) throw new Error('the console rig has not started (beforeAll failed)');
      return started;
    },
    download: async (label) => {
      const { page } = suite.rig;
      const [saved] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: label, exact: true }).click()]);
      return readFile(await saved.path());
    },
  };
  return suite;
}

export const records = (csv: Buffer): string[][] => parse(csv, { bom: true, relax_column_count: true });
