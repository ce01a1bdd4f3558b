/**
 * One HTTP exchange between fastify and the SDK's web-standard side: the fastify request as a
 * `Request` (headers and the caller-gone signal; fastify has parsed the body already, it is
 * handed over parsed), and the SDK's `Response` back through the reply.
 *
 * A JSON answer is complete when the SDK hands it over: it is read, given to `rewrite` (the
 * contract's tool errors, tool-result.ts) and sent, so the cost headers a tool set while it ran
 * are on it. An event stream (a tool call that sends progress, a 2025 client's streamed answer)
 * is piped as it comes, never buffered: a stream may stay open long after its first event. Its
 * headers leave before the tool has run, so its cost travels as HTTP trailers
 * (`X-Service-Cost`, `X-Service-Free-Remaining`) as well as in the result's `_meta`.
 */
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { COST_HEADER, FREE_REMAINING_HEADER } from '../plugins/metering.ts';

/** Request headers the SDK has no business reading (the key is checked before it runs). */
const WITHHELD_HEADERS = new Set(['authorization', 'cookie', 'host', 'content-length', 'connection', 'transfer-encoding']);
/** Response headers fastify writes itself. */
const OWN_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'date', 'keep-alive']);

export function webRequestOf(request: FastifyRequest, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (WITHHELD_HEADERS.has(name) || value === undefined) continue;
    headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  return new Request(`http://gateway${request.url}`, { method: request.method, headers, signal });
}

const isEventStream = (response: Response): boolean =>
  (response.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase() === 'text/event-stream';

export interface AnswerOptions {
  /** Rewrites a complete JSON answer (status < 400) before it is sent. */
  rewrite: (body: string) => string;
  /** Ends the exchange's server and transport once the answer is out (or the caller gone). */
  teardown: () => void;
}

/** Sends the SDK's answer through the reply: JSON read whole, an event stream piped as it comes. */
export async function sendAnswer(reply: FastifyReply, response: Response, options: AnswerOptions): Promise<FastifyReply> {
  reply.raw.once('close', options.teardown);
  reply.code(response.status);
  for (const [name, value] of response.headers) if (!OWN_HEADERS.has(name)) reply.header(name, value);
  if (response.body !== null && isEventStream(response)) {
    // The tool meters itself after these headers are gone; charge() still records the cost
    // on the reply, where the trailers read it when the stream ends.
    reply.trailer(COST_HEADER, async (sent: FastifyReply) => String(sent.getHeader(COST_HEADER) ?? '0'));
    reply.trailer(FREE_REMAINING_HEADER, async (sent: FastifyReply) => String(sent.getHeader(FREE_REMAINING_HEADER) ?? ''));
    return await reply.send(Readable.fromWeb(response.body));
  }
  const body = await response.text();
  return await reply.send(body === '' ? undefined : response.status < 400 ? options.rewrite(body) : body);
}
