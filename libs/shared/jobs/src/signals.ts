import type { Logger } from '@svc/telemetry';

/**
 * SIGTERM/SIGINT run `close` once; a second signal exits at once, and so does a close that takes
 * longer than `graceMs` (SHUTDOWN_GRACE_MS). Without that bound a worker whose Redis never
 * answered stayed alive after SIGTERM for as long as anyone waited (BullMQ's close waits for the
 * connection): a Ctrl-C that did nothing, a pod that only SIGKILL ended. Jobs still running then
 * are not lost: their locks lapse and another worker takes them over.
 */
export function exitOnSignals(close: () => Promise<void>, logger: Logger, graceMs: number): void {
  let signalled = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    signalled = true;
    logger.info({ signal }, 'shutting down');
    setTimeout(() => {
      logger.error({ graceMs }, 'shutdown outlived SHUTDOWN_GRACE_MS; exiting');
      process.exit(1);
    }, graceMs).unref();
    close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
