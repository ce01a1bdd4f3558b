/**
 * A worker process's small HTTP server: /healthz, /readyz and /metrics.
 *
 * Liveness and readiness differ on purpose: /healthz answers 200 as long as the process can
 * answer at all, so an orchestrator never restarts every worker because Redis went away; /readyz
 * answers 200 only while `readiness` finds no problem.
 */
import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';

export interface ProbeHandlers {
  /** Why the process cannot take jobs now, or undefined when it can. */
  readiness(): Promise<string | undefined>;
  /** The metrics exposition, fresh for this scrape. */
  metrics(): Promise<{ contentType: string; body: string }>;
}

export function createProbeServer(handlers: ProbeHandlers): Server {
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (path === '/healthz') return sendJson(response, 200, { status: 'ok' });
    if (path === '/readyz') {
      void handlers
        .readiness()
        .catch((error: unknown) => (error instanceof Error ? error.message : 'readiness check failed'))
        .then((problem) =>
          problem === undefined
            ? sendJson(response, 200, { status: 'ready' })
            : sendJson(response, 503, { error: 'service_unavailable', message: problem }, { 'retry-after': '5' }),
        );
      return;
    }
    if (path === '/metrics') {
      void handlers.metrics().then(
        ({ contentType, body }) => response.writeHead(200, { 'content-type': contentType }).end(body),
        () => response.writeHead(500).end(),
      );
      return;
    }
    sendJson(response, 404, { error: 'not_found', message: 'Try /healthz, /readyz or /metrics.' });
  });
  server.requestTimeout = 10_000;
  return server;
}

/** Listens on `port`, or rejects saying where it could not (a port already taken, most often). */
export async function listenProbes(server: Server, port: number, host: string): Promise<number> {
  server.listen(port, host);
  await once(server, 'listening').catch((error: unknown) => {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`cannot serve /healthz, /readyz and /metrics on ${host}:${port}: ${reason}`);
  });
  const address = server.address();
  return typeof address === 'object' && address !== null ? address.port : port;
}

export const closeServer = (server: Server): Promise<void> =>
  server.listening ? new Promise<void>((resolve) => server.close(() => resolve())) : Promise.resolve();

function sendJson(response: ServerResponse, status: number, body: object, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}
