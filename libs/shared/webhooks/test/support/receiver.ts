/**
 * A callback receiver for tests: a real HTTP (or HTTPS) server on 127.0.0.1 whose answer to each
 * request is scripted (a status, a hang, an endless body), recording what it received.
 */
import {
  createServer as createHttpServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { Resolver } from 'node:dns/promises';
import type { RigDnsServer } from '@svc/testkit';
import type { ResolveHost } from '@svc/webhooks';

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** A status (with an optional body and headers), no answer at all, or a 200 whose body never ends. */
export type Reply = { status: number; body?: string; headers?: Record<string, string> } | 'hang' | 'endless-200';
/** May be async: the answer then waits (a test can change the world between request and answer). */
export type Script = (request: ReceivedRequest, index: number) => Reply | Promise<Reply>;

export interface Receiver {
  /** `http(s)://127.0.0.1:<port>` */
  origin: string;
  port: number;
  requests: ReceivedRequest[];
  /** Connections the server saw closed (an aborted attempt, a bounded read). */
  closedConnections: number;
  close(): Promise<void>;
}

export async function startReceiver(script: Script, options: { tls?: { key: string; cert: string } } = {}): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const handle = (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const received: ReceivedRequest = {
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      requests.push(received);
      void Promise.resolve(script(received, requests.length - 1)).then((reply) => answer(reply, response));
    });
  };
  const answer = (reply: Reply, response: ServerResponse) => {
    if (reply === 'hang') return;
    if (reply !== 'endless-200') {
      response.writeHead(reply.status, reply.headers).end(reply.body ?? '');
      return;
    }
    response.writeHead(200, { 'content-type': 'text/plain' });
    const chunk = Buffer.alloc(16 * 1024, 'x');
    const pump = () => {
      if (response.destroyed) return;
      response.write(chunk);
      timers.add(setTimeout(pump, 5));
    };
    pump();
  };
  const server: Server = options.tls === undefined ? createHttpServer(handle) : createHttpsServer(options.tls, handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const receiver: Receiver = {
    origin: `${options.tls === undefined ? 'http' : 'https'}://127.0.0.1:${port}`,
    port,
    requests,
    closedConnections: 0,
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  server.on('connection', (socket) => socket.on('close', () => (receiver.closedConnections += 1)));
  return receiver;
}

/** Resolves names through the rig's DNS server (real DNS over UDP), both address families. */
export function resolverFor(dns: RigDnsServer): ResolveHost {
  const resolver = new Resolver({ timeout: 1_000, tries: 1 });
  resolver.setServers([dns.address]);
  return async (host) => {
    const answers = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
    const addresses = answers.flatMap((answer) => (answer.status === 'fulfilled' ? answer.value : []));
    if (addresses.length === 0) throw Object.assign(new Error(`no address for ${host}`), { code: 'ENOTFOUND' });
    return addresses;
  };
}
