import { ApiError } from '@svc/contracts';
import { describe, expect, it } from 'vitest';
import { isBug, toApiError } from '../../src/errors/api-errors.ts';

const fastifyError = (code: string, statusCode: number): Error => Object.assign(new Error(code), { code, statusCode });

describe('toApiError', () => {
  it('keeps an ApiError as it is', () => {
    const error = new ApiError('not_found', 'No such list.');
    expect(toApiError(error, 'req-1')).toBe(error);
  });

  it.each([
    ['FST_ERR_CTP_BODY_TOO_LARGE', 413, 'payload_too_large'],
    ['FST_ERR_CTP_INVALID_MEDIA_TYPE', 415, 'unsupported_media_type'],
    ['FST_ERR_CTP_EMPTY_JSON_BODY', 400, 'invalid_request'],
    ['FST_ERR_CTP_INVALID_JSON_BODY', 400, 'invalid_request'],
    ['FST_ERR_BAD_URL', 400, 'invalid_request'],
  ])('maps fastify’s %s to the contract’s code', (code, status, expected) => {
    expect(toApiError(fastifyError(code, status), 'req-1').code).toBe(expected);
  });

  it('reads a malformed JSON body, an unknown 413 or 415, and any other 4xx from the status', () => {
    expect(toApiError(Object.assign(new SyntaxError('bad'), { statusCode: 400 }), 'r').message).toContain('not valid JSON');
    expect(toApiError(Object.assign(new Error('big'), { statusCode: 413 }), 'r').code).toBe('payload_too_large');
    expect(toApiError(Object.assign(new Error('type'), { statusCode: 415 }), 'r').code).toBe('unsupported_media_type');
    expect(toApiError(Object.assign(new Error('odd'), { statusCode: 422 }), 'r').code).toBe('invalid_request');
  });

  it('answers anything else as an internal error that quotes the request id', () => {
    for (const thrown of [new Error('boom'), 'a string', Object.assign(new Error('x'), { statusCode: 502 })]) {
      const mapped = toApiError(thrown, 'req-42');
      expect(mapped.code).toBe('internal_error');
      expect(mapped.message).toContain('req-42');
      expect(isBug(mapped)).toBe(true);
    }
  });

  it('takes the backend’s expected refusals for warnings, not bugs', () => {
    expect(isBug(new ApiError('service_unavailable', 'Redis is out of reach.'))).toBe(false);
    expect(isBug(new ApiError('timeout', 'Deadline.'))).toBe(false);
    expect(isBug(new ApiError('invalid_request', 'Bad.'))).toBe(false);
  });
});
