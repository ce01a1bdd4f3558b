/**
 * Runs a billable operation's job through the transport: the one path shared by the REST routes
 * and the tool servers, so that both doors validate, wait, time out and meter alike.
 */
import type { JobKind, OperationId } from '@svc/contracts';
import { CallerGoneError, type JobTransport } from '@svc/jobs';
import type { GatewayMetrics } from '@svc/telemetry';
import type { FastifyRequest } from 'fastify';
import { isApiError } from '@svc/contracts';

/** The call a job is run for: its request id, and the signal that its caller has left. */
export interface CallContext {
  requestId: string;
  callerGone: AbortSignal;
  /** Told how far the job is, where the caller follows it (a tool call with a progressToken). */
  onProgress?: (done: number, total: number) => void;
  /** The calling key's id (verify jobs answer from what that key reported). */
  keyId?: string;
}

/** The request's call; its signal is read (and made) only by a transport that waits on it. */
export const callOf = (request: FastifyRequest): CallContext => ({
  requestId: request.id,
  ...(request.identity.key === null ? {} : { keyId: request.identity.key.id }),
  get callerGone() {
    return request.callerGone;
  },
});

export interface JobRunner {
  run<P, R>(operation: OperationId, kind: JobKind<P, R>, payload: P, call: CallContext): Promise<R>;
}

/** The `outcome` label of a job wait that ended in `error` (the job-wait histogram's, not a call's). */
function jobWaitOutcome(error: unknown): string {
  if (error instanceof CallerGoneError) return 'client_gone';
  const code = isApiError(error) ? error.code : 'internal_error';
  return code === 'timeout' ? 'timeout' : code === 'service_unavailable' ? 'unavailable' : 'failed';
}

export function createJobRunner(transport: JobTransport, deadlines: Record<OperationId, number>, metrics: GatewayMetrics): JobRunner {
  return {
    async run(operation, kind, payload, call) {
      const started = performance.now();
      const observe = (outcome: string) => metrics.jobWait.observe({ queue: kind.name, outcome }, (performance.now() - started) / 1_000);
      try {
        const result = await transport.submit(kind, payload, {
          deadlineMs: deadlines[operation],
          requestId: call.requestId,
          get callerGone() {
            return call.callerGone;
          },
          ...(call.onProgress === undefined ? {} : { onProgress: call.onProgress }),
        });
        observe('completed');
        return result;
      } catch (error) {
        const outcome = jobWaitOutcome(error);
        observe(outcome);
        if (outcome === 'timeout') metrics.jobsTimedOut.inc({ queue: kind.name });
        throw error;
      }
    },
  };
}
