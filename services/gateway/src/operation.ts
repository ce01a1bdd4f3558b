/**
 * Runs a billable operation's job through the transport: the one path shared by the REST routes
 * and the tool servers, so that both doors validate, wait, time out and meter alike.
 */
import type { JobKind, OperationId } from '@svc/contracts';
import type { JobTransport } from '@svc/jobs';
import type { GatewayMetrics } from '@svc/telemetry';
import { isApiError } from '@svc/contracts';

export interface JobRunner {
  run<P, R>(operation: OperationId, kind: JobKind<P, R>, payload: P, requestId: string): Promise<R>;
}

export function createJobRunner(transport: JobTransport, deadlines: Record<OperationId, number>, metrics: GatewayMetrics): JobRunner {
  return {
    async run(operation, kind, payload, requestId) {
      const started = performance.now();
      const observe = (outcome: string) => metrics.jobWait.observe({ queue: kind.name, outcome }, (performance.now() - started) / 1_000);
      try {
        const result = await transport.submit(kind, payload, { deadlineMs: deadlines[operation], requestId });
        observe('completed');
        return result;
      } catch (error) {
        const code = isApiError(error) ? error.code : 'internal_error';
        observe(code === 'timeout' ? 'timeout' : code === 'service_unavailable' ? 'unavailable' : 'failed');
        if (code === 'timeout') metrics.jobsTimedOut.inc({ queue: kind.name });
        throw error;
      }
    },
  };
}
