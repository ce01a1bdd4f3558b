/**
 * HTTP as a hostile client writes it: any bytes on a socket, read back as status, headers and
 * body. The server closes the connection after its answer (send `Connection: close` for
 * well-formed requests).
 */
import net from 'node:net';

export interface RawResponse {
  status: number;
  headers: Map<string, string>;
  body: string;
  /** The whole answer as received. */
  text: string;
}

export function parseResponse(text: string): RawResponse {
  const split = text.indexOf('\r\n\r\n');
  const head = split < 0 ? text : text.slice(0, split);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = new Map<string, string>();
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  let body = split < 0 ? '' : text.slice(split + 4);
  if (headers.get('transfer-encoding') === 'chunked') body = unchunk(body);
  return { status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0), headers, body, text };
}

function unchunk(body: string): string {
  let out = '';
  let rest = body;
  for (;;) {
    const eol = rest.indexOf('\r\n');
    const size = parseInt(rest.slice(0, eol), 16);
    if (!(size > 0)) return out;
    out += rest.slice(eol + 2, eol + 2 + size);
    rest = rest.slice(eol + 2 + size + 2);
  }
}

/** Writes `request` as it is and resolves with what came back once the server closed (or `timeoutMs`). */
export function rawRequest(baseUrl: string, request: string | Buffer, timeoutMs = 10_000): Promise<RawResponse> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete answer within ${timeoutMs} ms to ${JSON.stringify(String(request).slice(0, 80))}`));
    }, timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(parseResponse(Buffer.concat(chunks).toString('utf8')));
    });
    socket.write(request);
  });
}
