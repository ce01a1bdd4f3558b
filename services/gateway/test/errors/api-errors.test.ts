import { ApiError } from '@svc/contracts';
import { createLogger } from '@svc/telemetry';
import { describe, expect, it } from 'vitest';
import { apiErrorLog, isBug, toApiError } from '../../src/errors/api-errors.ts';

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

describe('apiErrorLog', () => {
  it('writes a refusal for want of the backend once per kind and given window (LOG_ERROR_WINDOW_MS), whichever request it was', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = createLogger('info', 'gateway', {
      write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>),
    });
    const log = apiErrorLog(200);
    const refusal = new ApiError('service_unavailable', 'The key store is unreachable; retry shortly.');
    for (const requestId of ['r1', 'r2', 'r3']) log(logger.child({ requestId }), refusal, refusal);
    expect(lines).toHaveLength(1);
    // The count goes to the last request's log when the window ends.
    await expect.poll(() => lines.length, { timeout: 2_000, interval: 10 }).toBe(2);
    expect(lines[1]).toMatchObject({ requestId: 'r3', suppressed: 2, windowMs: 200, level: 40 });
    // A caller's mistake is not a backend error: written every time.
    const mistake = new ApiError('invalid_request', 'The request is malformed.');
    log(logger, mistake, mistake);
    log(logger, mistake, mistake);
    expect(lines).toHaveLength(4);
  });
});
