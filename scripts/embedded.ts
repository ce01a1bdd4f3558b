/**
 * Embedded mode: the whole product in one process (no REDIS_URL). The gateway is the same code
 * as in distributed mode; only the transport (in-process) and the stores (memory) differ.
 */
import type { Config } from '@svc/config';
import { InProcessTransport, type RegisteredHandler } from '@svc/jobs';
import { MemoryListQueue, MemoryListStore, type CallbackDispatcher } from '@svc/lists';
import { MemoryMeter } from '@svc/metering';
import { createGatewayMetrics, createLogger, createRegistry } from '@svc/telemetry';
import { MemoryKeyStore, buildGateway, generateApiKey, type GatewayApp } from '@svc/gateway';
import { qrJobHandler } from '@svc/qr-worker';
import { LocalPriorityLimiter, createListProcessor, createVerifyHandler, type PrioritySessionLimiter } from '@svc/verify-worker';
import type { Registry } from 'prom-client';

export interface Embedded {
  gateway: GatewayApp;
  transport: InProcessTransport;
  keys: MemoryKeyStore;
  /** The development key made at start-up when API_KEYS is empty, else undefined. */
  devKey: string | undefined;
  /** Stops the list work (after the HTTP server). */
  closeLists: () => Promise<void>;
}

/** The workers of embedded mode; tests may replace them. Batches and lists share session slots. */
export const defaultHandlers = (config: Config, registry: Registry, limiter?: PrioritySessionLimiter): RegisteredHandler[] => [
  qrJobHandler,
  createVerifyHandler({ config, registry, ...(limiter === undefined ? {} : { limiter: limiter.for('batch') }) }),
];

const JANITOR_INTERVAL_MS = 30_000;

export async function buildEmbedded(
  config: Config,
  handlers: (registry: Registry, limiter: PrioritySessionLimiter) => RegisteredHandler[] = (registry, limiter) =>
    defaultHandlers(config, registry, limiter),
  options: { dispatcher?: CallbackDispatcher } = {},
): Promise<Embedded> {
  const logger = createLogger(config.LOG_LEVEL, 'embedded');
  const registry = createRegistry({ service: 'embedded' });
  const limiter = new LocalPriorityLimiter(config.VERIFY_MAX_CONNECTIONS_PER_HOST);
  const transport = new InProcessTransport(handlers(registry, limiter));
  const keys = new MemoryKeyStore();
  const configured = config.API_KEYS ?? [];
  for (const [index, key] of configured.entries()) await keys.create(`API_KEYS[${index}]`, key);
  const devKey = configured.length === 0 ? generateApiKey() : undefined;
  if (devKey !== undefined) await keys.create('development', devKey);

  // Lists: kept in memory and worked in this process, beside the batch jobs.
  const meter = new MemoryMeter();
  const store = new MemoryListStore();
  const queue = new MemoryListQueue({ concurrency: config.LIST_WORKER_CONCURRENCY });
  // Callback delivery (@svc/webhooks) is wired here when that package is merged.
  const processor = createListProcessor({
    config,
    store,
    queue,
    meter,
    limiter: limiter.for('list'),
    registry,
    logger,
    ...(options.dispatcher === undefined ? {} : { dispatcher: options.dispatcher }),
  });
  queue.start(processor.handle, (job, error) => void processor.failJob(job, error).catch(() => undefined));
  const stopJanitor = processor.startJanitor(JANITOR_INTERVAL_MS);

  const gateway = await buildGateway({
    config,
    transport,
    keys,
    meter,
    metrics: createGatewayMetrics(registry),
    renderMetrics: async () => ({ contentType: registry.contentType, body: await registry.metrics() }),
    logger,
    lists: { store, queue },
  });
  const closeLists = async () => {
    stopJanitor();
    await queue.close();
  };
  return { gateway, transport, keys, devKey, closeLists };
}
