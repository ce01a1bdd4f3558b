/**
 * A real Prometheus (and Redis exporter) for the live monitoring test: a generated configuration
 * with the job names of deploy/prometheus/prometheus.yml pointed at loopback ports, a short scrape
 * interval, and the real rule file; queries through the HTTP API.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse, stringify } from 'yaml';
import { freePort, requireBinary, startBinary, type ServiceProcess } from '@svc/testkit';

export const DEPLOYED_CONFIG = 'deploy/prometheus/prometheus.yml';
export const RULES = 'deploy/prometheus/alerts.yml';

/** The scrape job names operations deploys (dashboards and alerts select on them). */
export function deployedJobNames(): string[] {
  const config = parse(readFileSync(DEPLOYED_CONFIG, 'utf8')) as { scrape_configs: Array<{ job_name: string }> };
  return config.scrape_configs.map((job) => job.job_name);
}

export interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

export interface RunningPrometheus {
  url: string;
  /** An instant query; throws with Prometheus's own error text when the query fails. */
  query: (expr: string) => Promise<Sample[]>;
  stop: () => Promise<void>;
  output: () => string;
}

export async function startPrometheus(targets: Record<string, string>): Promise<RunningPrometheus> {
  requireBinary('prometheus', 'apt-get install prometheus (Debian; .ci/run does it)');
  const dir = mkdtempSync(join(tmpdir(), 'prometheus-'));
  const port = await freePort();
  const config = {
    global: { scrape_interval: '1s', scrape_timeout: '900ms', evaluation_interval: '1s' },
    rule_files: [resolve(RULES)],
    scrape_configs: Object.entries(targets).map(([job, target]) => ({ job_name: job, static_configs: [{ targets: [target] }] })),
  };
  writeFileSync(join(dir, 'prometheus.yml'), stringify(config));
  const server = startBinary('prometheus', [
    `--config.file=${join(dir, 'prometheus.yml')}`,
    `--storage.tsdb.path=${join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`,
    '--log.level=warn',
  ]);
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    output: server.output,
    query: async (expr) => {
      const response = await fetch(`${url}/api/v1/query?${new URLSearchParams({ query: expr }).toString()}`);
      const body = (await response.json()) as { status: string; error?: string; data?: { resultType: string; result: Sample[] } };
      if (body.status !== 'success' || body.data === undefined) throw new Error(`query failed: ${expr}\n${body.error ?? response.status}`);
      if (body.data.resultType !== 'vector') throw new Error(`expected an instant vector from ${expr}, got ${body.data.resultType}`);
      return body.data.result;
    },
    stop: async () => {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function startRedisExporter(redisUrl: string): Promise<{ target: string; service: ServiceProcess }> {
  requireBinary('prometheus-redis-exporter', 'apt-get install prometheus-redis-exporter (Debian; .ci/run does it)');
  const port = await freePort();
  const service = startBinary('prometheus-redis-exporter', [
    `-redis.addr=${redisUrl}`,
    `-web.listen-address=127.0.0.1:${port}`,
    '-redis-only-metrics',
  ]);
  return { target: `127.0.0.1:${port}`, service };
}
