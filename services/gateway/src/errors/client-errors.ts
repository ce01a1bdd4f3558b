/**
 * Requests refused before routing, answered in the contract's format with a request id. Nothing
 * was routed, so nothing is billed: the cost header says 0 whatever the path was.
 * - Node's HTTP parser (a header section over its 16 KiB limit, a malformed request line, a
 *   client too slow to send its request): answered here, on the raw socket.
 * - fastify's router (a path that does not decode, such as `%ff`): `frameworkErrors`.
 */
import { randomUUID } from 'node:crypto';
import { STATUS_CODES, maxHeaderSize, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { ApiError } from '@svc/contracts';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { COST_HEADER } from '../plugins/metering.ts';
import { sendError, toApiError } from './api-errors.ts';

/** Node's own limit on the request line and headers (16 KiB unless --max-http-header-size says otherwise). */
const HEADER_LIMIT_KIB = maxHeaderSize / 1024;

interface ParserError extends Error {
  code?: string;
}

function parserErrorToApiError(code: string | undefined): ApiError {
  if (code === 'HPE_HEADER_OVERFLOW') {
    return new ApiError(
      'headers_too_large',
      `The request line and headers exceed ${HEADER_LIMIT_KIB} KiB; send long content in a POST body where the operation takes one.`,
    );
  }
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return new ApiError('request_timeout', 'The request did not arrive in time; send it again.');
  return new ApiError('invalid_request', 'The request line or a header is malformed.');
}

function rawErrorResponse(error: ApiError, requestId: string): string {
  const body = JSON.stringify(error.toBody());
  const headers = [
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? 'Error'}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${requestId}`,
    `${COST_HEADER}: 0`,
    'Connection: close',
  ];
  return `${headers.join('\r\n')}\r\n\r\n${body}`;
}

/**
 * How long a refused request's connection is read from after its answer before it is closed.
 * Closing a socket that still has unread data resets it, and a client still sending its body
 * then sees ECONNRESET or EPIPE instead of the answer (a 17 MiB list upload got EPIPE in 12 of 30
 * fetches). So the answer goes out with `Connection: close`, the gateway's side is shut at once
 * (the client sees the end of the connection right after the answer), and what still arrives is
 * read and dropped for at most this long: nginx's lingering close, not the minutes a trickling
 * body could take.
 */
export const REFUSED_LINGER_MS = 2_000;

/**
 * An answer that goes out before the request's body has all arrived. A refusal (401, 408, 413,
 * 415, 429, a CSV list refused at a bad row) closes the connection: nobody waits for a body the
 * gateway will not use (decisions, "Fair share and hostile input"). Any other early answer (a
 * DELETE whose body is not read) keeps the connection and reads the rest of the body, within
 * the body's own time allowance (plugins/body-timeout.ts).
 * Returns whether the connection is to close after the answer.
 */
export function settleUnreadBody(request: IncomingMessage, status: number): boolean {
  // A body read in part (a CSV refused mid-way) is paused: Node drops only a body nobody read.
  request.resume();
  if (status < 400) return false;
  lingerOnClose(request.socket);
  return true;
}

/**
 * Node ends a `Connection: close` answer's socket with `destroySoon()`: its side shut, then the
 * socket destroyed as soon as the answer is flushed, unread data and all (the reset above). This
 * socket's `destroySoon` lingers instead: shut our side, read and drop until the client closes
 * its side or REFUSED_LINGER_MS passed, then destroy.
 */
function lingerOnClose(socket: Socket): void {
  socket.destroySoon = function lingeringClose(this: Socket): void {
    if (this.writable) this.end();
    const cut = setTimeout(() => this.destroy(), REFUSED_LINGER_MS);
    cut.unref();
    this.once('close', () => clearTimeout(cut));
    this.once('end', () => this.destroy());
    this.resume();
  };
}

/** The last request dispatched on each connection, so that no request is answered twice. */
const dispatched = new WeakMap<Socket, { request: IncomingMessage; response: ServerResponse }>();

export function watchResponses(server: Server): void {
  server.on('request', (request, response) => dispatched.set(request.socket, { request, response }));
}

/** fastify's `clientErrorHandler`: answer once in the contract's format, then close. */
export function clientErrorHandler(this: FastifyInstance, error: ParserError, socket: Socket): void {
  // A reset or an already closed socket has nobody left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  // The parser may fail on the rest of a request it already dispatched (its body framing). If
  // that request's answer has started, it stands and the connection closes after it; otherwise
  // the request is answered here, since its body will never arrive whole.
  const last = dispatched.get(socket);
  if (last !== undefined && !last.request.complete && last.response.headersSent) {
    if (last.response.writableFinished) socket.destroy();
    else last.response.once('close', () => socket.destroy());
    return;
  }
  const apiError = parserErrorToApiError(error.code);
  const requestId = randomUUID();
  this.log.info({ reqId: requestId, code: apiError.code, parserError: error.code }, 'request refused by the HTTP parser');
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  socket.end(rawErrorResponse(apiError, requestId));
  socket.once('finish', () => socket.destroy());
}

/** CONNECT (Node hands it to a `connect` listener, or closes the socket unanswered): this is not a proxy. */
export function refuseConnect(this: FastifyInstance, _request: unknown, socket: Socket): void {
  const requestId = randomUUID();
  this.log.info({ reqId: requestId, code: 'invalid_request' }, 'CONNECT refused');
  socket.end(rawErrorResponse(new ApiError('invalid_request', 'CONNECT is not supported: this service is not a proxy.'), requestId));
  socket.once('finish', () => socket.destroy());
}

/** fastify's `frameworkErrors`: a URL the router cannot decode, answered like any other error. */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const apiError = toApiError(error, request.id);
  request.log.info({ code: apiError.code, frameworkError: error.code }, 'request refused before routing');
  void sendError(reply.header('X-Request-Id', request.id).header(COST_HEADER, '0'), apiError);
}
