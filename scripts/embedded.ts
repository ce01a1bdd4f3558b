/**
 * Embedded mode: the whole product in one process (no REDIS_URL). The gateway is the same code
 * as in distributed mode; only the transport (in-process) and the stores (memory) differ.
 */
import type { Config } from '@svc/config';
import { InProcessTransport, type RegisteredHandler } from '@svc/jobs';
import { createGatewayMetrics, createLogger, createRegistry } from '@svc/telemetry';
import { MemoryKeyStore, MemoryMeter, buildGateway, generateApiKey, type GatewayApp } from '@svc/gateway';
import { qrJobHandler } from '@svc/qr-worker';
import { createVerifyHandler } from '@svc/verify-worker';
import { generateWebhookSecret } from '@svc/webhooks/secrets';
import type { Registry } from 'prom-client';

export interface Embedded {
  gateway: GatewayApp;
  transport: InProcessTransport;
  keys: MemoryKeyStore;
  /** The development key made at start-up when API_KEYS is empty, else undefined. */
  devKey: string | undefined;
  /** Signs every key's list callbacks: LIST_WEBHOOK_SECRET, or one made at start-up. */
  webhookSecret: string;
  /** The secret made at start-up because LIST_WEBHOOK_SECRET is unset (printed once), else undefined. */
  generatedWebhookSecret: string | undefined;
}

/** The workers of embedded mode; tests may replace them. */
export const defaultHandlers = (config: Config, registry: Registry): RegisteredHandler[] => [
  qrJobHandler,
  createVerifyHandler({ config, registry }),
];

export async function buildEmbedded(
  config: Config,
  handlers: (registry: Registry) => RegisteredHandler[] = (registry) => defaultHandlers(config, registry),
): Promise<Embedded> {
  const logger = createLogger(config.LOG_LEVEL, 'embedded');
  const registry = createRegistry({ service: 'embedded' });
  const transport = new InProcessTransport(handlers(registry));
  const keys = new MemoryKeyStore();
  const configured = config.API_KEYS ?? [];
  for (const [index, key] of configured.entries()) await keys.create(`API_KEYS[${index}]`, key);
  const devKey = configured.length === 0 ? generateApiKey() : undefined;
  if (devKey !== undefined) await keys.create('development', devKey);
  const webhookSecret = config.LIST_WEBHOOK_SECRET ?? generateWebhookSecret();
  const generatedWebhookSecret = config.LIST_WEBHOOK_SECRET === undefined ? webhookSecret : undefined;
  const gateway = await buildGateway({
    config,
    transport,
    keys,
    meter: new MemoryMeter(),
    metrics: createGatewayMetrics(registry),
    renderMetrics: async () => ({ contentType: registry.contentType, body: await registry.metrics() }),
    logger,
  });
  return { gateway, transport, keys, devKey, webhookSecret, generatedWebhookSecret };
}
