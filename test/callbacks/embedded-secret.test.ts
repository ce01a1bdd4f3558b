/**
 * Embedded mode's webhook secret: `npm start` with LIST_WEBHOOK_SECRET unset prints a generated
 * one once, like the development key; with it set, prints none. And the two configuration names.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '@svc/config';
import { spawnNode, stopProcessTree, childEnv } from '@svc/testkit';
import { WEBHOOK_SECRET_PATTERN } from '@svc/webhooks';

const children: ChildProcess[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) await stopProcessTree(child);
});

/** Starts `npm start`'s entry point and returns all it printed, once it printed the development key. */
async function startEmbedded(extra: Record<string, string>): Promise<string> {
  const env: Record<string, string | undefined> = childEnv({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...extra });
  if (extra.LIST_WEBHOOK_SECRET === undefined) delete env.LIST_WEBHOOK_SECRET;
  const child = spawnNode('scripts/start.ts', { env });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const ended = once(child.stdout!, 'end');
  await expect.poll(() => /sk_[A-Za-z0-9]{32}/.test(output), { timeout: 30_000, interval: 100 }).toBe(true);
  // Whatever comes after the key is written in the same turn: stopping the process then ends its
  // output, so all of it has been read (no pause that a slow pipe could outlast).
  await stopProcessTree(child);
  await ended;
  return output;
}

describe('embedded mode webhook secret', () => {
  it('is generated and printed once when LIST_WEBHOOK_SECRET is unset', async () => {
    const output = await startEmbedded({});
    const secrets = output.match(/whsec_[A-Za-z0-9]{40}/g) ?? [];
    expect(secrets).toHaveLength(1);
    expect(secrets[0]).toMatch(WEBHOOK_SECRET_PATTERN);
    expect(output).toContain('set LIST_WEBHOOK_SECRET to keep one');
  }, 40_000);

  it('is not printed when LIST_WEBHOOK_SECRET is set', async () => {
    const output = await startEmbedded({ LIST_WEBHOOK_SECRET: 'operator-chosen-secret-0123456789' });
    expect(output).not.toMatch(/whsec_/);
    expect(output).not.toContain('operator-chosen-secret');
  }, 40_000);
});

describe('configuration', () => {
  it('LIST_ALLOW_PRIVATE_CALLBACKS defaults to false; LIST_WEBHOOK_SECRET is optional and at least 16 characters', () => {
    expect(loadConfig({}).LIST_ALLOW_PRIVATE_CALLBACKS).toBe(false);
    expect(loadConfig({ LIST_ALLOW_PRIVATE_CALLBACKS: 'true' }).LIST_ALLOW_PRIVATE_CALLBACKS).toBe(true);
    expect(loadConfig({}).LIST_WEBHOOK_SECRET).toBeUndefined();
    expect(loadConfig({ LIST_WEBHOOK_SECRET: 'whsec_abcdefghijklmnop' }).LIST_WEBHOOK_SECRET).toBe('whsec_abcdefghijklmnop');
    expect(() => loadConfig({ LIST_WEBHOOK_SECRET: 'short' })).toThrow(ConfigError);
    expect(() => loadConfig({ LIST_ALLOW_PRIVATE_CALLBACKS: 'maybe' })).toThrow(ConfigError);
  });
});
