/** TCP connection to a mail server, direct or through a SOCKS5 proxy, bounded by a timeout and a signal. */
import net from 'node:net';
import { SocksClient } from 'socks';

export type ConnectFailureKind = 'refused' | 'timeout' | 'aborted' | 'error';

export class ConnectError extends Error {
  constructor(
    readonly kind: ConnectFailureKind,
    message: string,
  ) {
    super(message);
  }
}

export interface ConnectOptions {
  host: string;
  port: number;
  timeoutMs: number;
  signal?: AbortSignal;
  socksProxy?: string;
}

export async function openConnection(opts: ConnectOptions): Promise<net.Socket> {
  if (!opts.socksProxy) return tcpConnect(opts.host, opts.port, opts.timeoutMs, opts.signal);
  const started = Date.now();
  const proxy = parseSocksUrl(opts.socksProxy);
  const socket = await tcpConnect(proxy.host, proxy.port, opts.timeoutMs, opts.signal);
  return socksHandshake(socket, proxy, opts, Math.max(1, opts.timeoutMs - (Date.now() - started)));
}

interface SocksProxyAddress {
  host: string;
  port: number;
  userId?: string;
  password?: string;
}

export function parseSocksUrl(value: string): SocksProxyAddress {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConnectError('error', 'socks proxy: not a URL');
  }
  if (url.protocol !== 'socks5:' && url.protocol !== 'socks5h:')
    throw new ConnectError('error', `socks proxy: unsupported scheme ${url.protocol}`);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const address: SocksProxyAddress = { host, port: url.port ? Number(url.port) : 1080 };
  if (url.username) {
    address.userId = decodeURIComponent(url.username);
    address.password = decodeURIComponent(url.password);
  }
  return address;
}

function tcpConnect(host: string, port: number, timeoutMs: number, signal?: AbortSignal): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new ConnectError('aborted', 'aborted before connecting'));
    const socket = net.connect({ host, port, noDelay: true });
    const finish = (err?: ConnectError): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      socket.off('error', onError).off('connect', onConnect);
      if (!err) return resolve(socket);
      socket.destroy();
      reject(err);
    };
    const onAbort = (): void => finish(new ConnectError('aborted', 'aborted while connecting'));
    const onError = (err: NodeJS.ErrnoException): void =>
      finish(new ConnectError(err.code === 'ECONNREFUSED' || err.code === 'ECONNRESET' ? 'refused' : 'error', err.code ?? err.message));
    const onConnect = (): void => finish();
    const timer = setTimeout(() => finish(new ConnectError('timeout', `no connection within ${timeoutMs} ms`)), timeoutMs);
    signal?.addEventListener('abort', onAbort, { once: true });
    socket.once('error', onError).once('connect', onConnect);
  });
}

async function socksHandshake(socket: net.Socket, proxy: SocksProxyAddress, opts: ConnectOptions, timeoutMs: number): Promise<net.Socket> {
  // Our own timer and signal destroy the socket; the library then rejects and `why` names the cause.
  let why: ConnectError | undefined;
  const stop = (err: ConnectError): void => {
    why ??= err;
    socket.destroy();
  };
  const timer = setTimeout(() => stop(new ConnectError('timeout', `socks proxy: no connection within ${timeoutMs} ms`)), timeoutMs);
  const onAbort = (): void => stop(new ConnectError('aborted', 'aborted while connecting'));
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const { socket: tunnel } = await SocksClient.createConnection({
      command: 'connect',
      proxy: { host: proxy.host, port: proxy.port, type: 5, userId: proxy.userId, password: proxy.password },
      destination: { host: opts.host, port: opts.port },
      existing_socket: socket,
      timeout: timeoutMs + 1000,
    });
    if (why) throw why;
    return tunnel;
  } catch (err) {
    socket.destroy();
    if (why) throw why;
    const message = err instanceof Error ? err.message : String(err);
    throw new ConnectError(/ConnectionRefused/.test(message) ? 'refused' : 'error', `socks proxy: ${message}`);
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onAbort);
  }
}
