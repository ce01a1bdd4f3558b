import type { FastifyRequest } from 'fastify';

/**
 * Whether the request announces a body: chunked, or a Content-Length above 0. The body timeout
 * starts only for such requests, and a refused content type is answered as a missing body when
 * there is none to type (the errors plugin, the list upload).
 */
export const hasBody = (request: FastifyRequest): boolean =>
  request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;
