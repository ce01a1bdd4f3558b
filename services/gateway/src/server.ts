/**
 * Listening (the API on PORT, /metrics on GATEWAY_METRICS_PORT) and graceful shutdown, shared by
 * the distributed gateway and embedded mode.
 * SIGTERM: readiness turns false at once, the server stops taking connections, in-flight
 * requests finish (each bounded by its own deadline, the whole by SHUTDOWN_GRACE_MS), then the
 * job transport and Redis connections close.
 */
import type { Config } from '@svc/config';
import { exitOnSignals } from '@svc/jobs';
import type { Logger } from '@svc/telemetry';
import type { GatewayApp } from './app.ts';

export interface ServeOptions {
  config: Config;
  logger: Logger;
  /** Closed after the HTTP server, in order (transport, workers, Redis). */
  closers: Array<() => Promise<void>>;
}

export async function serve(gateway: GatewayApp, options: ServeOptions): Promise<string> {
  const address = await gateway.app.listen({ port: options.config.PORT, host: options.config.HOST });
  const metricsAddress = await gateway.metrics.listen({ port: options.config.GATEWAY_METRICS_PORT, host: options.config.HOST });
  options.logger.info({ metricsAddress }, 'serving /metrics');
  const shutdown = async () => {
    gateway.drain();
    // Connections that were busy when closing began become idle once answered; without this
    // sweep they would keep the server open for the whole keep-alive timeout.
    const sweep = setInterval(() => gateway.app.server.closeIdleConnections(), 100);
    await gateway.app.close();
    clearInterval(sweep);
    options.logger.info('HTTP server closed; in-flight requests answered');
    for (const close of options.closers) await close().catch((error: unknown) => options.logger.error({ err: error }, 'close failed'));
    options.logger.info('job transport and Redis closed');
  };
  exitOnSignals(shutdown, options.logger, options.config.SHUTDOWN_GRACE_MS);
  return address;
}
