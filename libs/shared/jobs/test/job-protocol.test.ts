/**
 * The job protocol across releases (job-protocol.ts, docs/architecture.md "Job messages"): a
 * gateway reads the answers of a worker of an earlier release (v0: no `v`, a failure as a bare
 * `reason`) and of a later one (a `v` it does not know, an error code it does not know), and a
 * gateway of v0 still reads what this release's workers answer.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ApiError } from '@svc/contracts';
import { awaitJob } from '@svc/jobs';
import { failureAnswer, failureError, JOB_PROTOCOL_VERSION } from '../src/job-protocol.ts';
import { encodeReply, parseReply, type Reply } from '../src/reply-channel.ts';

/** The answer schema of a v0 gateway, as that release held it. */
const v0ReplySchema = z.union([
  z.object({ jobId: z.string(), ok: z.literal(true), result: z.unknown() }),
  z.object({ jobId: z.string(), ok: z.literal(false), reason: z.string() }),
]);

/** How a gateway's wait ends for a failure answer (what BullTransport.settle hands awaitJob). */
async function answered(reply: Reply): Promise<unknown> {
  if (reply.ok) throw new Error('not a failure');
  return awaitJob(Promise.reject(failureError(reply)), { deadlineAt: Date.now() + 5_000, requestId: 'req-v', kind: 'echo' }).then(
    () => undefined,
    (error: unknown) => error,
  );
}

const refused = new ApiError('content_too_long', 'too long', { details: { limit: 3 }, headers: { 'Retry-After': '7' } });

describe('answers of a v0 worker', () => {
  it('a whole-JSON result, a framed result and a failure without `v` are read', () => {
    expect(parseReply('{"jobId":"a","ok":true,"result":{"value":"A"}}')).toEqual({ jobId: 'a', ok: true, result: { value: 'A' } });
    expect(parseReply('B{"jobId":"b","ok":true,"result":{"contentType":"text/plain"}}\nbody')).toEqual({
      jobId: 'b',
      ok: true,
      result: { contentType: 'text/plain', body: 'body' },
    });
    expect(parseReply('{"jobId":"c","ok":false,"reason":"handler bug"}')).toEqual({ jobId: 'c', ok: false, reason: 'handler bug' });
  });

  it('a failure with only a reason is internal_error naming the request id, as before', async () => {
    const error = await answered({ jobId: 'c', ok: false, reason: 'handler bug' });
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: 'internal_error', details: { requestId: 'req-v' } });
  });
});

describe('answers of this release (v1 and later)', () => {
  const failure = (error: unknown): Reply => failureAnswer('d', error);

  it("carry a handler's ApiError, which the gateway's wait throws as itself", async () => {
    const reply = parseReply(encodeReply(failure(refused), true));
    expect(reply).toMatchObject({ v: JOB_PROTOCOL_VERSION, ok: false, error: { code: 'content_too_long', message: 'too long' } });
    const error = await answered(reply!);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: 'content_too_long', message: 'too long', details: { limit: 3 }, headers: { 'Retry-After': '7' } });
  });

  it('carry no error for anything else a handler throws: still internal_error', async () => {
    const reply = parseReply(encodeReply(failure(new Error('handler bug')), true))!;
    expect(reply).not.toHaveProperty('error');
    expect(await answered(reply)).toMatchObject({ code: 'internal_error' });
  });

  it('are read by a v0 gateway: the result as before, a failure as its reason', () => {
    const result = JSON.parse(encodeReply({ v: 1, jobId: 'e', ok: true, result: { value: 'E' } }, false)) as unknown;
    expect(v0ReplySchema.parse(result)).toEqual({ jobId: 'e', ok: true, result: { value: 'E' } });
    const failed = JSON.parse(encodeReply(failure(refused), false)) as unknown;
    expect(v0ReplySchema.parse(failed)).toEqual({ jobId: 'd', ok: false, reason: 'too long' });
  });
});

describe('answers of a later release', () => {
  it('a higher `v` is read; an error whose code this release does not know falls back to the reason (internal_error), not dropped', async () => {
    const reply = parseReply('{"v":7,"jobId":"f","ok":false,"reason":"new","error":{"code":"quantum_flux","message":"?"}}');
    expect(reply).toEqual({ v: 7, jobId: 'f', ok: false, reason: 'new' });
    expect(await answered(reply!)).toMatchObject({ code: 'internal_error' });
  });
});
