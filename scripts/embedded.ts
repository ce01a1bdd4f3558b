/**
 * Embedded mode: the whole product in one process (no REDIS_URL). The gateway and the workers are
 * the same code as in distributed mode, composed here on the embedded backend (`@svc/backend`:
 * in-process transport, memory stores); only that backend differs.
 */
import { createEmbeddedBackend, type EmbeddedBackend } from '@svc/backend';
import type { Config } from '@svc/config';
import type { RegisteredHandler } from '@svc/jobs';
import { createLogger, createRegistry } from '@svc/telemetry';
import { buildGatewayOn, generateApiKey, type GatewayApp, type KeyStore } from '@svc/gateway';
import { qrJobHandler } from '@svc/qr-worker';
import { JANITOR_INTERVAL_MS, createVerifyWork } from '@svc/verify-worker';
import type { CallbackDispatcher } from '@svc/webhooks';

export interface Embedded {
  gateway: GatewayApp;
  backend: EmbeddedBackend;
  keys: KeyStore;
  /** The development key made at start-up when API_KEYS is empty, else undefined. */
  devKey: string | undefined;
  /** Stops the workers and the backend (after the HTTP server). */
  close: () => Promise<void>;
}

export interface EmbeddedOptions {
  /** Job handlers to run instead of the product's QR and verify handlers (tests); list work is the product's. */
  handlers?: RegisteredHandler[];
  /** Another callback dispatcher than the embedded one (tests record callbacks). */
  dispatcher?: CallbackDispatcher;
}

export async function buildEmbedded(config: Config, options: EmbeddedOptions = {}): Promise<Embedded> {
  const logger = createLogger(config.LOG_LEVEL, 'embedded', undefined, config.LOG_ERROR_WINDOW_MS);
  const registry = createRegistry({ service: 'embedded' });
  const backend = createEmbeddedBackend(config, {
    process: 'embedded',
    logger,
    ...(options.dispatcher === undefined ? {} : { dispatcher: options.dispatcher }),
  });
  // The workers, in this process: batches and lists share session slots, batches first.
  const verify = createVerifyWork(backend, { registry, logger });
  await backend.serve(options.handlers ?? [qrJobHandler, verify.handler]);
  backend.workLists(verify.lists, { janitorIntervalMs: JANITOR_INTERVAL_MS });
  const { gateway, keys, close } = await buildGatewayOn(backend, { registry, logger });

  const configured = config.API_KEYS ?? [];
  for (const [index, key] of configured.entries()) await keys.create(`API_KEYS[${index}]`, key);
  const devKey = configured.length === 0 ? generateApiKey() : undefined;
  if (devKey !== undefined) await keys.create('development', devKey);
  return {
    gateway,
    backend,
    keys,
    devKey,
    close: async () => {
      await close();
      await backend.close();
      verify.close();
    },
  };
}
