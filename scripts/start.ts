/**
 * `npm start`: embedded mode when REDIS_URL is unset (everything in this process), the
 * distributed gateway when it is set (run workers with `npm run start:qr-worker` and
 * `npm run start:verify-worker`).
 */
import { loadConfig } from '@svc/config';
import { createLogger } from '@svc/telemetry';
import { consoleLine, serve } from '@svc/gateway';
import { ensureConsoleBuilt } from './console-build.ts';
import { buildEmbedded } from './embedded.ts';

const config = loadConfig();
// The web console at /app is static files: built here when a clone has none or its sources changed.
// The built start (scripts/dist/start.js, production) serves what `npm run build` made and has no Vite.
if (import.meta.url.endsWith('.ts')) await ensureConsoleBuilt();
if (config.mode === 'distributed') {
  // Loaded only here: embedded mode never loads BullMQ or the Redis client (about 165 ms of start-up).
  const { startDistributedGateway } = await import('@svc/gateway/distributed');
  await startDistributedGateway(config);
} else {
  const logger = createLogger(config.LOG_LEVEL, 'embedded', undefined, config.LOG_ERROR_WINDOW_MS);
  const { gateway, backend, devKey, close } = await buildEmbedded(config);
  const address = await serve(gateway, { config, logger, closers: [close] });
  const { generatedWebhookSecret } = backend;
  logger.info({ address, mode: 'embedded' }, 'listening');
  if (devKey !== undefined) {
    // Printed once, to the terminal only: it is not kept anywhere but this process's memory.
    process.stdout.write(`\nDevelopment API key (embedded mode, valid until this process stops):\n  ${devKey}\n\n`);
  }
  // Where a person goes next: the console, signed in with the key above (never put in the URL).
  process.stdout.write(consoleLine(address, devKey !== undefined));
  if (generatedWebhookSecret !== undefined) {
    // Same rule as the key: shown once, kept only in memory. LIST_WEBHOOK_SECRET makes it last.
    process.stdout.write(
      `Webhook secret signing list callbacks (embedded mode, valid until this process stops; set LIST_WEBHOOK_SECRET to keep one):\n  ${generatedWebhookSecret}\n\n`,
    );
  }
}
