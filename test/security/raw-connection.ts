/**
 * One raw TCP connection to the gateway, timed: when the first answer arrived, when the gateway
 * shut its side (`end`), when the connection closed. What fetch hides (a reset, a connection
 * kept open after the answer) is what these tests are about.
 */
import net from 'node:net';

export interface TimedConnection {
  socket: net.Socket;
  started: number;
  received: () => string;
  /** When the answer's head arrived (undefined: not yet). */
  answeredAt: () => number | undefined;
  /** When the gateway ended its side of the connection. */
  ended: Promise<number>;
  closed: Promise<number>;
  /** Writes `chunk` every `everyMs` until the connection ends. */
  trickle: (chunk: string, everyMs: number) => void;
}

export function openConnection(baseUrl: string): TimedConnection {
  const { hostname, port } = new URL(baseUrl);
  const socket = net.connect(Number(port), hostname);
  socket.on('error', () => undefined);
  let received = '';
  let answeredAt: number | undefined;
  socket.on('data', (chunk: Buffer) => {
    received += chunk.toString('latin1');
    if (answeredAt === undefined && received.includes('\r\n\r\n')) answeredAt = Date.now();
  });
  const ended = new Promise<number>((resolve) => {
    socket.once('end', () => resolve(Date.now()));
    socket.once('close', () => resolve(Date.now()));
  });
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now())));
  let timer: NodeJS.Timeout | undefined;
  void closed.then(() => clearInterval(timer));
  return {
    socket,
    started: Date.now(),
    received: () => received,
    answeredAt: () => answeredAt,
    ended,
    closed,
    trickle: (chunk, everyMs) => {
      timer = setInterval(() => {
        if (socket.writable) socket.write(chunk);
      }, everyMs);
    },
  };
}
