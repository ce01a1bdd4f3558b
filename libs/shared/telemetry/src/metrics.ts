/**
 * Metric definitions shared by the processes. Names follow Prometheus conventions (base units,
 * `_total` counters) and every label takes a bounded set of values: never an address, a key or a
 * domain. The dashboards and alert rules in deploy/ and k8s/ are tested against these names.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { OPERATION_IDS, QR_JOB, VERIFY_JOB } from '@svc/contracts';

export function createRegistry(labels: Record<string, string> = {}): Registry {
  const registry = new Registry();
  registry.setDefaultLabels(labels);
  collectDefaultMetrics({ register: registry });
  return registry;
}

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60];

/** `client_gone`: the caller left before its answer was ready (not billed). */
const CALL_OUTCOMES = [
  'success',
  'client_error',
  'unauthorized',
  'rate_limited',
  'timeout',
  'unavailable',
  'server_error',
  'client_gone',
] as const;
export type CallOutcome = (typeof CALL_OUTCOMES)[number];

export function createGatewayMetrics(registry: Registry) {
  const metrics = {
    requestDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request latency',
      labelNames: ['method', 'route', 'status_code'] as const,
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    requests: new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests answered',
      labelNames: ['method', 'route', 'status_code'] as const,
      registers: [registry],
    }),
    calls: new Counter({
      name: 'api_calls_total',
      help: 'Calls of a billable operation by outcome',
      labelNames: ['operation', 'outcome'] as const,
      registers: [registry],
    }),
    /** The latency objectives are per operation, whichever door (REST route or MCP tool) a call came through. */
    callDuration: new Histogram({
      name: 'api_call_duration_seconds',
      help: 'Time to answer a call of a billable operation, by outcome',
      labelNames: ['operation', 'outcome'] as const,
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    cost: new Counter({
      name: 'api_cost_usd_total',
      help: 'Charged cost in US dollars by operation',
      labelNames: ['operation'] as const,
      registers: [registry],
    }),
    rateLimited: new Counter({
      name: 'rate_limit_rejections_total',
      help: 'Calls refused by a rate limit',
      labelNames: ['operation'] as const,
      registers: [registry],
    }),
    jobWait: new Histogram({
      name: 'job_wait_seconds',
      help: 'Time a request waited for its job, by queue and outcome',
      labelNames: ['queue', 'outcome'] as const,
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    jobsTimedOut: new Counter({
      name: 'jobs_timed_out_total',
      help: 'Jobs that did not finish within the request deadline',
      labelNames: ['queue'] as const,
      registers: [registry],
    }),
    inflight: new Gauge({ name: 'gateway_inflight_requests', help: 'Requests being answered', registers: [registry] }),
  };
  // Every series the objectives read exists at 0 from the start: Prometheus's rate() cannot see
  // the increment that creates a series, so a process's first error or timeout would go uncounted.
  for (const operation of OPERATION_IDS) {
    for (const outcome of CALL_OUTCOMES) metrics.calls.inc({ operation, outcome }, 0);
    for (const outcome of ['success', 'timeout'] as const) metrics.callDuration.zero({ operation, outcome });
  }
  for (const queue of [QR_JOB.name, VERIFY_JOB.name]) metrics.jobsTimedOut.inc({ queue }, 0);
  return metrics;
}
export type GatewayMetrics = ReturnType<typeof createGatewayMetrics>;

export function createWorkerMetrics(registry: Registry) {
  return {
    jobDuration: new Histogram({
      name: 'worker_job_duration_seconds',
      help: 'Job run time by queue and outcome',
      labelNames: ['queue', 'outcome'] as const,
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    activeJobs: new Gauge({ name: 'worker_active_jobs', help: 'Jobs running now', labelNames: ['queue'] as const, registers: [registry] }),
    queueJobs: new Gauge({
      name: 'queue_jobs',
      help: 'Jobs in the queue by state (BullMQ counts)',
      labelNames: ['queue', 'state'] as const,
      registers: [registry],
    }),
    queueWait: new Histogram({
      name: 'queue_wait_seconds',
      help: 'Time from enqueueing a job to a worker starting it, by queue',
      labelNames: ['queue'] as const,
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    oldestJobAge: new Gauge({
      name: 'queue_oldest_job_age_seconds',
      help: 'How long the longest-waiting job not yet started has waited (0 when none waits), by queue',
      labelNames: ['queue'] as const,
      registers: [registry],
    }),
  };
}
export type WorkerMetrics = ReturnType<typeof createWorkerMetrics>;
