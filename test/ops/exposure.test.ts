/**
 * The shipped deployment files are safe as they are (decisions, "Deployment exposure"). Every
 * Kubernetes overlay and trial Redis is rendered with `kubectl kustomize`, as the manifest tests
 * do: every Redis takes its password from the Secret `redis-auth`, every pod of the product reads
 * it as REDIS_PASSWORD, the KEDA Redis scalers authenticate through it, every workload has a
 * NetworkPolicy, only the product reaches Redis, and only the verify-worker goes out (DNS, 25,
 * 443) to public addresses. Compose publishes only the API on every interface, and Grafana has
 * no anonymous access and no default password.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';

interface Container {
  name: string;
  args?: string[];
  command?: string[];
  env?: Array<{ name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }>;
}
interface Obj {
  kind: string;
  metadata: { name: string };
  spec?: {
    template?: { metadata: { labels: Record<string, string> }; spec: { containers: Container[] } };
    podSelector?: { matchLabels?: Record<string, string> };
    policyTypes?: string[];
    ingress?: Array<{ from?: Array<Record<string, unknown>>; ports?: Array<{ port: number }> }>;
    egress?: Array<{ to?: Array<{ ipBlock?: { cidr: string; except?: string[] } }>; ports?: Array<{ port: number }> }>;
    triggers?: Array<{ type: string; authenticationRef?: { name: string } }>;
    secretTargetRef?: Array<{ parameter: string; name: string; key: string }>;
  };
  data?: Record<string, string>;
}

function render(directory: string): Obj[] {
  const output = execFileSync('kubectl', ['kustomize', directory], { encoding: 'utf8' });
  return parseAllDocuments(output).map((document) => document.toJSON() as Obj);
}

const PRODUCT = ['gateway', 'qr-worker', 'verify-worker'];
const OVERLAYS = ['k8s', 'k8s/overlays/cluster', 'k8s/overlays/sentinel'];
const REDIS = ['k8s/redis', 'k8s/redis-cluster', 'k8s/redis-sentinel'];

const workloads = (objects: Obj[]) => objects.filter((object) => ['Deployment', 'StatefulSet'].includes(object.kind));
const nameOf = (workload: Obj) => workload.spec!.template!.metadata.labels['app.kubernetes.io/name']!;
const fromSecret = (container: Container, name: string) =>
  container.env?.find((variable) => variable.name === name)?.valueFrom?.secretKeyRef;
const policyFor = (objects: Obj[], app: string) =>
  objects.find((object) => object.kind === 'NetworkPolicy' && object.spec?.podSelector?.matchLabels?.['app.kubernetes.io/name'] === app);

describe.each(OVERLAYS)('%s', (directory) => {
  const objects = render(directory);

  it('every pod of the product reads REDIS_PASSWORD from the Secret redis-auth', () => {
    for (const workload of workloads(objects))
      for (const container of workload.spec!.template!.spec.containers)
        expect(fromSecret(container, 'REDIS_PASSWORD'), `${workload.metadata.name}/${container.name}`).toEqual({
          name: 'redis-auth',
          key: 'password',
        });
  });

  it("KEDA's Redis scalers authenticate through a TriggerAuthentication on that Secret", () => {
    const auth = objects.find((object) => object.kind === 'TriggerAuthentication');
    expect(auth?.spec?.secretTargetRef).toEqual([{ parameter: 'password', name: 'redis-auth', key: 'password' }]);
    const scaled = objects.filter((object) => object.kind === 'ScaledObject');
    expect(scaled).toHaveLength(2);
    for (const object of scaled) {
      const redis = object.spec!.triggers!.filter((trigger) => trigger.type.startsWith('redis'));
      expect(redis.length).toBe(1);
      expect(redis[0]!.authenticationRef).toEqual({ name: auth!.metadata.name });
    }
  });

  it('every workload has a NetworkPolicy for ingress and egress; only the verify-worker goes out, to public addresses on 53, 25 and 443', () => {
    for (const app of PRODUCT) {
      const policy = policyFor(objects, app);
      expect(policy, app).toBeDefined();
      expect(policy!.spec!.policyTypes).toEqual(['Ingress', 'Egress']);
      const outside = policy!.spec!.egress!.filter((rule) => rule.to?.some((peer) => peer.ipBlock !== undefined));
      if (app !== 'verify-worker') {
        expect(outside, app).toEqual([]);
        continue;
      }
      expect(outside).toHaveLength(1);
      expect(outside[0]!.ports!.map((port) => port.port).sort()).toEqual([25, 443, 53, 53].sort());
      const v4 = outside[0]!.to!.find((peer) => peer.ipBlock?.cidr === '0.0.0.0/0')!.ipBlock!;
      expect(v4.except).toEqual(
        expect.arrayContaining(['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '127.0.0.0/8', '169.254.0.0/16', '100.64.0.0/10']),
      );
      expect(outside[0]!.to!.map((peer) => peer.ipBlock?.cidr)).not.toContain('::/0');
    }
    // The API is open; the metrics ports only to the cluster.
    const gateway = policyFor(objects, 'gateway')!;
    const metricsRule = gateway.spec!.ingress!.find((rule) => rule.ports?.some((port) => port.port === 9102));
    expect(metricsRule?.from).toEqual([{ namespaceSelector: {} }]);
  });
});

describe.each(REDIS)('%s', (directory) => {
  const objects = render(directory);

  it('every Redis container takes its password from redis-auth (requirepass, masterauth, Sentinel auth-pass); exporters too', () => {
    const scripts = objects.find((object) => object.kind === 'ConfigMap')?.data ?? {};
    for (const workload of workloads(objects)) {
      for (const container of workload.spec!.template!.spec.containers) {
        const where = `${workload.metadata.name}/${container.name}`;
        expect(fromSecret(container, 'REDIS_PASSWORD'), where).toEqual({ name: 'redis-auth', key: 'password' });
        if (container.name === 'redis') {
          const flags = [...(container.args ?? []), ...Object.values(scripts)].join(' ');
          expect(flags, where).toMatch(/--requirepass "?\$\(?REDIS_PASSWORD\)?"?/);
          expect(flags, where).toMatch(/--masterauth "?\$\(?REDIS_PASSWORD\)?"?/);
        }
        if (container.name === 'sentinel') expect(scripts['sentinel.sh']).toContain('sentinel auth-pass mymaster $REDIS_PASSWORD');
      }
    }
  });

  it('a NetworkPolicy lets only the product (and Redis itself) reach each Redis workload', () => {
    for (const workload of workloads(objects)) {
      const policy = policyFor(objects, nameOf(workload));
      expect(policy, nameOf(workload)).toBeDefined();
      const data = policy!.spec!.ingress!.filter((rule) => rule.ports?.some((port) => [6379, 26379].includes(port.port)));
      expect(data.length).toBeGreaterThan(0);
      for (const rule of data) {
        const clients = JSON.stringify(rule.from);
        for (const app of PRODUCT) expect(clients).toContain(app);
        expect(rule.from).not.toContainEqual({ namespaceSelector: {} });
        expect(rule.from).not.toContainEqual({});
      }
    }
  });
});

describe('docker-compose.yml', () => {
  const compose = parse(readFileSync('docker-compose.yml', 'utf8'), { merge: true }) as {
    services: Record<string, { ports?: string[]; environment?: Record<string, string> }>;
  };

  it('publishes only the API on every interface; Prometheus, Grafana and every metrics port on 127.0.0.1', () => {
    const published = Object.entries(compose.services).flatMap(([name, service]) => (service.ports ?? []).map((port) => `${name} ${port}`));
    expect(published.filter((entry) => !/ 127\.0\.0\.1:/.test(entry))).toEqual(['gateway 3000:3000']);
    expect(published).toEqual(
      expect.arrayContaining(['gateway 127.0.0.1:9102:9102', 'prometheus 127.0.0.1:9090:9090', 'grafana 127.0.0.1:3001:3000']),
    );
  });

  it('Grafana: anonymous access off, the admin password from the environment with no default', () => {
    const grafana = compose.services.grafana!.environment!;
    expect(grafana.GF_AUTH_ANONYMOUS_ENABLED).toBe('false');
    expect(grafana.GF_SECURITY_ADMIN_PASSWORD).toMatch(/^\$\{GRAFANA_ADMIN_PASSWORD:\?[^}]+\}$/);
  });
});
