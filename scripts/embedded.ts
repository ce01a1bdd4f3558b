/**
 * Embedded mode: the whole product in one process (no REDIS_URL). The gateway is the same code
 * as in distributed mode; only the transport (in-process) and the stores (memory) differ.
 */
import type { Config } from '@svc/config';
import { InProcessTransport, type RegisteredHandler } from '@svc/jobs';
import { MemoryListQueue, MemoryListStore } from '@svc/lists';
import { MemoryMeter } from '@svc/metering';
import { createGatewayMetrics, createLogger, createRegistry } from '@svc/telemetry';
import { MemoryKeyStore, buildGateway, generateApiKey, type GatewayApp } from '@svc/gateway';
import { qrJobHandler } from '@svc/qr-worker';
import {
  JANITOR_INTERVAL_MS,
  LocalPriorityLimiter,
  createListProcessor,
  createVerifyHandler,
  type PrioritySessionLimiter,
} from '@svc/verify-worker';
import { memoryFeedback, type Feedback } from '@svc/feedback';
import { InProcessCallbackDispatcher, type CallbackDispatcher } from '@svc/webhooks';
import { generateWebhookSecret, sharedSecret } from '@svc/webhooks/secrets';
import type { Registry } from 'prom-client';

export interface Embedded {
  gateway: GatewayApp;
  transport: InProcessTransport;
  keys: MemoryKeyStore;
  /** Learning from sends, in memory: the gateway's doors and the verifier share it. */
  feedback: Feedback;
  /** The development key made at start-up when API_KEYS is empty, else undefined. */
  devKey: string | undefined;
  /** Signs every key's list callbacks: LIST_WEBHOOK_SECRET, or one made at start-up. */
  webhookSecret: string;
  /** The secret made at start-up because LIST_WEBHOOK_SECRET is unset (printed once), else undefined. */
  generatedWebhookSecret: string | undefined;
  /** Stops the list work and the callback deliveries (after the HTTP server). */
  closeLists: () => Promise<void>;
}

/** The workers of embedded mode; tests may replace them. Batches and lists share session slots. */
export const defaultHandlers = (
  config: Config,
  registry: Registry,
  limiter?: PrioritySessionLimiter,
  feedback?: Feedback,
): RegisteredHandler[] => [
  qrJobHandler,
  createVerifyHandler({
    config,
    registry,
    ...(limiter === undefined ? {} : { limiter: limiter.for('batch') }),
    ...(feedback === undefined ? {} : { feedback }),
  }),
];

export async function buildEmbedded(
  config: Config,
  handlers: (registry: Registry, limiter: PrioritySessionLimiter, feedback: Feedback) => RegisteredHandler[] = (
    registry,
    limiter,
    feedback,
  ) => defaultHandlers(config, registry, limiter, feedback),
  options: { dispatcher?: CallbackDispatcher } = {},
): Promise<Embedded> {
  const logger = createLogger(config.LOG_LEVEL, 'embedded');
  const registry = createRegistry({ service: 'embedded' });
  const limiter = new LocalPriorityLimiter(config.VERIFY_MAX_CONNECTIONS_PER_HOST);
  const feedback = memoryFeedback(config);
  const transport = new InProcessTransport(handlers(registry, limiter, feedback));
  const keys = new MemoryKeyStore();
  const configured = config.API_KEYS ?? [];
  for (const [index, key] of configured.entries()) await keys.create(`API_KEYS[${index}]`, key);
  const devKey = configured.length === 0 ? generateApiKey() : undefined;
  if (devKey !== undefined) await keys.create('development', devKey);
  const webhookSecret = config.LIST_WEBHOOK_SECRET ?? generateWebhookSecret();
  const generatedWebhookSecret = config.LIST_WEBHOOK_SECRET === undefined ? webhookSecret : undefined;

  // Lists: kept in memory and worked in this process, beside the batch jobs; their callbacks are
  // delivered from here too, signed with the one embedded secret.
  const meter = new MemoryMeter();
  const store = new MemoryListStore();
  const queue = new MemoryListQueue({ concurrency: config.LIST_WORKER_CONCURRENCY });
  const dispatcher =
    options.dispatcher ??
    new InProcessCallbackDispatcher({ secrets: sharedSecret(webhookSecret), allowPrivate: config.LIST_ALLOW_PRIVATE_CALLBACKS, logger });
  const processor = createListProcessor({
    config,
    store,
    queue,
    meter,
    limiter: limiter.for('list'),
    registry,
    logger,
    dispatcher,
    feedback,
  });
  queue.start(processor.handle, (job, error) =>
    processor
      .failJob(job, error)
      .catch((failure: unknown) => logger.error({ err: failure, listId: job.listId }, 'a failed list job could not be recorded')),
  );
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
    feedback,
  });
  const closeLists = async () => {
    stopJanitor();
    await queue.close();
    await dispatcher.close();
  };
  return { gateway, transport, keys, feedback, devKey, webhookSecret, generatedWebhookSecret, closeLists };
}
