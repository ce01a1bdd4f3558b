/** The distributed gateway: its backend in Redis (jobs over BullMQ; keys, meters, lists and rate limits in Redis). */
import { createDistributedBackend } from '@svc/backend/distributed';
import type { Config } from '@svc/config';
import type { JobTransport } from '@svc/jobs';
import { createLogger, createRegistry } from '@svc/telemetry';
import type { GatewayApp } from './app.ts';
import { consoleLine } from './console-url.ts';
import { buildGatewayOn } from './on-backend.ts';
import { serve } from './server.ts';
import type { KeyStore } from './stores/key-store.ts';

export interface DistributedGateway {
  gateway: GatewayApp;
  keys: KeyStore;
  transport: JobTransport;
  /** Close these after the HTTP server, in order. */
  closers: Array<() => Promise<void>>;
}

export async function buildDistributedGateway(config: Config): Promise<DistributedGateway> {
  const registry = createRegistry({ service: 'gateway' });
  const logger = createLogger(config.LOG_LEVEL, 'gateway', undefined, config.LOG_ERROR_WINDOW_MS);
  const backend = createDistributedBackend(config, { process: 'gateway', logger });
  try {
    const { gateway, keys, close } = await buildGatewayOn(backend, { registry, logger });
    return { gateway, keys, transport: await backend.transport(), closers: [close, backend.close] };
  } catch (error) {
    await backend.close();
    throw error;
  }
}

export async function startDistributedGateway(config: Config): Promise<string> {
  const logger = createLogger(config.LOG_LEVEL, 'gateway', undefined, config.LOG_ERROR_WINDOW_MS);
  const { gateway, closers } = await buildDistributedGateway(config);
  const address = await serve(gateway, { config, logger, closers });
  logger.info({ address, mode: 'distributed' }, 'gateway listening');
  // Where a person goes next, as `npm start` prints it (keys come from `npm run keys`).
  process.stdout.write(consoleLine(address));
  return address;
}
