/**
 * A SOCKS5 proxy for the mail rig (RFC 1928, no authentication, CONNECT only), bound to one
 * loopback address and connecting out FROM that address, so a rig mail server sees each proxy
 * as a client of its own address: an egress of the verifier's pool. Counts its tunnels.
 */
import net from 'node:net';

export interface RigSocksServer {
  /** `socks5://<host>:<port>`, for VERIFY_SOCKS_PROXY. */
  url: string;
  host: string;
  /** CONNECT requests tunnelled so far. */
  readonly tunnels: number;
  close(): Promise<void>;
}

const VERSION = 5;
const NO_AUTH = 0;
const CONNECT = 1;
const REPLY = { succeeded: 0, failure: 1, refused: 5, commandNotSupported: 7, addressNotSupported: 8 } as const;

/** The destination of a CONNECT request, and the request's length; undefined while incomplete. */
function readRequest(buffer: Buffer): { host: string; port: number; length: number } | 'unsupported' | undefined {
  if (buffer.length < 5) return undefined;
  if (buffer[0] !== VERSION || buffer[1] !== CONNECT) return 'unsupported';
  const type = buffer[3];
  if (type === 1) {
    if (buffer.length < 10) return undefined;
    return { host: [...buffer.subarray(4, 8)].join('.'), port: buffer.readUInt16BE(8), length: 10 };
  }
  if (type === 3) {
    const size = buffer[4] ?? 0;
    if (buffer.length < 7 + size) return undefined;
    return { host: buffer.subarray(5, 5 + size).toString('latin1'), port: buffer.readUInt16BE(5 + size), length: 7 + size };
  }
  return 'unsupported';
}

const reply = (code: number) => Buffer.from([VERSION, code, 0, 1, 0, 0, 0, 0, 0, 0]);

export async function startSocksServer(host: string): Promise<RigSocksServer> {
  const sockets = new Set<net.Socket>();
  let tunnels = 0;
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
  };
  const server = net.createServer((client) => {
    track(client);
    let buffer = Buffer.alloc(0);
    let stage: 'greeting' | 'request' | 'tunnel' = 'greeting';
    const onData = (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      if (stage === 'greeting') {
        if (buffer.length < 2 || buffer.length < 2 + (buffer[1] ?? 0)) return;
        const methods = [...buffer.subarray(2, 2 + (buffer[1] ?? 0))];
        buffer = buffer.subarray(2 + (buffer[1] ?? 0));
        if (buffer[0] !== undefined && buffer[0] !== VERSION) return void client.destroy();
        if (!methods.includes(NO_AUTH)) return void client.end(Buffer.from([VERSION, 0xff]));
        client.write(Buffer.from([VERSION, NO_AUTH]));
        stage = 'request';
      }
      if (stage !== 'request') return;
      const request = readRequest(buffer);
      if (request === undefined) return;
      if (request === 'unsupported') return void client.end(reply(REPLY.commandNotSupported));
      const rest = buffer.subarray(request.length);
      stage = 'tunnel';
      client.off('data', onData);
      client.pause();
      const upstream = net.connect({ host: request.host, port: request.port, localAddress: host });
      track(upstream);
      upstream.once('error', () => client.end(reply(REPLY.refused)));
      upstream.once('connect', () => {
        tunnels += 1;
        upstream.removeAllListeners('error');
        upstream.on('error', () => client.destroy());
        client.on('error', () => upstream.destroy());
        client.write(reply(REPLY.succeeded));
        if (rest.length > 0) upstream.write(rest);
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
      });
    };
    client.on('data', onData);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `socks5://${host}:${port}`,
    host,
    get tunnels() {
      return tunnels;
    },
    close: async () => {
      sockets.forEach((socket) => socket.destroy());
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
