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
import { ApiError, LIST_BODY_LIMIT_BYTES } from '@svc/contracts';
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

/** The largest declared body the gateway reads and drops so that its early answer arrives. */
const DRAIN_LIMIT_BYTES = 4 * LIST_BODY_LIMIT_BYTES;

/**
 * An answer that goes out before the request's body has all arrived (413 on a declared length,
 * 401, 429, a CSV list refused at a bad row) reaches the client only if the gateway reads on: a
 * connection closed on unread data is reset, and the client, still sending, sees EPIPE or
 * ECONNRESET instead of the answer (fastify closes after a refused body: a 17 MiB list upload got
 * EPIPE in 12 of 30 fetches). So the rest of the body is read and dropped on a connection kept
 * open, within the body's time allowance (plugins/body-timeout.ts); a body declared larger than
 * DRAIN_LIMIT_BYTES is cut instead.
 * Returns whether the connection stays open for it (a body still arriving).
 */
export function drainUnreadBody(request: IncomingMessage): boolean {
  if (Number(request.headers['content-length']) > DRAIN_LIMIT_BYTES) return false;
  // A body read in part (a CSV refused mid-way) is paused: Node drops only a body nobody read.
  request.resume();
  return true;
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
