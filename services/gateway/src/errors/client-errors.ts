/**
 * Requests that Node's HTTP parser refuses before fastify sees them (a header section over its
 * 16 KiB limit, a malformed request line, a client too slow to send its request) are answered
 * here, on the raw socket, still in the contract's format and with a request id. Nothing was
 * routed, so nothing is billed: the cost header says 0 whatever the path was.
 */
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { ApiError } from '@svc/contracts';
import type { FastifyInstance } from 'fastify';
import { COST_HEADER } from '../plugins/metering.ts';

export const HEADER_LIMIT_KIB = 16;

interface ParserError extends Error {
  code?: string;
}

export function parserErrorToApiError(code: string | undefined): ApiError {
  if (code === 'HPE_HEADER_OVERFLOW') {
    return new ApiError(
      'headers_too_large',
      `The request line and headers exceed ${HEADER_LIMIT_KIB} KiB; send long content in a POST body where the operation takes one.`,
    );
  }
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return new ApiError('request_timeout', 'The request did not arrive in time; send it again.');
  return new ApiError('invalid_request', 'The request line or a header is malformed.');
}

export function rawErrorResponse(error: ApiError, requestId: string): string {
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

/** fastify's `clientErrorHandler`: answer once in the contract's format, then close. */
export function clientErrorHandler(this: FastifyInstance, error: ParserError, socket: Socket): void {
  // A reset or an already closed socket has nobody left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
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
