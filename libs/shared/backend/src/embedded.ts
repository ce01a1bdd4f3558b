/** Embedded mode's backend: every part in this process's memory, jobs and list work run here. */
import type { Config } from '@svc/config';
import { memoryFeedback } from '@svc/feedback';
import { InProcessTransport, type RegisteredHandler } from '@svc/jobs';
import { MemoryListQueue, MemoryListStore } from '@svc/lists';
import { MemoryMeter } from '@svc/metering';
import { InProcessCallbackDispatcher } from '@svc/webhooks';
import { generateWebhookSecret, sharedSecret } from '@svc/webhooks/secrets';
import type { BackendOptions, EmbeddedBackend } from './backend.ts';
import { ttlCacheIn } from './ttl-cache.ts';

export function createEmbeddedBackend(config: Config, options: BackendOptions): EmbeddedBackend {
  if (options.process !== 'embedded')
    throw new Error(
      `REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS is required for the ${options.process} (embedded mode runs it inside \`npm start\`).`,
    );
  const { logger } = options;
  const webhookSecret = config.LIST_WEBHOOK_SECRET ?? generateWebhookSecret();
  const queue = new MemoryListQueue({ concurrency: config.LIST_WORKER_CONCURRENCY });
  // Callbacks are delivered from this process, every key's signed with the one embedded secret.
  const dispatcher =
    options.dispatcher ??
    new InProcessCallbackDispatcher({ secrets: sharedSecret(webhookSecret), allowPrivate: config.LIST_ALLOW_PRIVATE_CALLBACKS, logger });
  const handlers: RegisteredHandler[] = [];
  let transport: InProcessTransport | undefined;
  const stops: Array<() => void> = [];
  const cleanups: Array<() => Promise<void>> = [];

  return {
    mode: 'embedded',
    config,
    state: { kind: 'memory' },
    meter: new MemoryMeter(),
    feedback: memoryFeedback(config),
    lists: { store: new MemoryListStore(), queue },
    dispatcher,
    webhookSecret,
    generatedWebhookSecret: config.LIST_WEBHOOK_SECRET === undefined ? webhookSecret : undefined,
    cache: (name, codec, memoryEntries) => ttlCacheIn({ kind: 'memory' }, name, codec, memoryEntries),
    transport: () => {
      transport ??= new InProcessTransport(handlers);
      return Promise.resolve(transport);
    },
    serve: (served) => {
      // The transport takes its handlers when made: a handler served after it would never run.
      if (transport !== undefined) return Promise.reject(new Error('Embedded mode serves its handlers before its transport is made.'));
      handlers.push(...served);
      return Promise.resolve();
    },
    workLists: (processor, work) => {
      queue.start(processor.handle, (job, error) =>
        processor
          .failJob(job, error)
          .catch((failure: unknown) => logger.error({ err: failure, listId: job.listId }, 'a failed list job could not be recorded')),
      );
      stops.push(processor.startJanitor(work.janitorIntervalMs));
    },
    deliverCallbacks: () => undefined,
    onClose: (cleanup) => {
      cleanups.push(cleanup);
    },
    close: async () => {
      await transport?.close();
      for (const stop of stops) stop();
      await queue.close();
      await dispatcher.close();
      for (const cleanup of cleanups) await cleanup();
    },
  };
}
