/**
 * A TCP proxy on loopback that a test can cut: the way to make "Redis stopped" happen to one
 * process without stopping the Redis that every test file shares.
 */
import { createConnection, createServer, type Socket } from 'node:net';

export interface TcpProxy {
  url: string;
  port: number;
  /** Drops every connection and refuses new ones until `restore`. */
  cut(): void;
  /**
   * Lets requests through but not the next reply: when the target answers, the answer is thrown
   * away and the proxy cuts (as `cut`). A server that ran a command and died before replying.
   */
  cutAtNextReply(): void;
  /**
   * New connections go to `targetUrl`; those open stay where they are (a managed endpoint whose
   * name moved to a new primary while clients still hold connections to the old one).
   */
  retarget(targetUrl: string): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetUrl: string): Promise<TcpProxy> {
  let target = new URL(targetUrl);
  const sockets = new Set<Socket>();
  let open = true;
  let cutAtReply = false;
  const cut = () => {
    open = false;
    for (const socket of sockets) socket.destroy();
  };
  const server = createServer((client) => {
    if (!open) {
      client.destroy();
      return;
    }
    const upstream = createConnection({ host: target.hostname, port: Number(target.port || 6379) });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
      if (!cutAtReply) {
        // What pipe() would do: a slow reader holds the target back instead of the proxy's memory.
        if (!client.write(chunk)) {
          upstream.pause();
          client.once('drain', () => upstream.resume());
        }
        return;
      }
      cutAtReply = false;
      cut();
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `redis://127.0.0.1:${port}${target.pathname}`,
    port,
    cut,
    cutAtNextReply: () => {
      cutAtReply = true;
    },
    restore: () => {
      open = true;
    },
    retarget: (url: string) => {
      target = new URL(url);
    },
    close: async () => {
      cut();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
