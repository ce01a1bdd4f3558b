/** Which Redis the environment names (decisions, "Modes" and "Redis topologies"). */
import { describe, expect, it } from 'vitest';
import { ConfigError, describeTopology, loadConfig } from '@svc/config';

describe('Redis topology from the environment', () => {
  it('none set: embedded mode', () => {
    const config = loadConfig({});
    expect(config.mode).toBe('embedded');
    expect(config.redis).toBeUndefined();
  });

  it('REDIS_URL: one node, with the command timeout', () => {
    const config = loadConfig({ REDIS_URL: 'redis://10.0.0.1:6380', REDIS_COMMAND_TIMEOUT_MS: '250' });
    expect(config.mode).toBe('distributed');
    expect(config.redis).toEqual({ kind: 'single', url: 'redis://10.0.0.1:6380', commandTimeoutMs: 250 });
  });

  it('REDIS_URL without a password takes REDIS_PASSWORD (Kubernetes gives it from a Secret); one with its own keeps it', () => {
    expect(loadConfig({ REDIS_URL: 'redis://redis:6379', REDIS_PASSWORD: 'p@ss word' }).redis).toMatchObject({
      kind: 'single',
      url: 'redis://:p%40ss%20word@redis:6379',
    });
    expect(loadConfig({ REDIS_URL: 'redis://:own@redis:6379', REDIS_PASSWORD: 'other' }).redis).toMatchObject({
      url: 'redis://:own@redis:6379',
    });
    expect(loadConfig({ REDIS_URL: 'redis://redis:6379' }).redis).toMatchObject({ url: 'redis://redis:6379' });
  });

  it('REDIS_CLUSTER_NODES: seed nodes, credentials and TLS', () => {
    const config = loadConfig({
      REDIS_CLUSTER_NODES: 'a:7000, b:7001,[::1]:7002',
      REDIS_USERNAME: 'svc',
      REDIS_PASSWORD: 'secret',
      REDIS_TLS: 'true',
    });
    expect(config.redis).toEqual({
      kind: 'cluster',
      nodes: [
        { host: 'a', port: 7000 },
        { host: 'b', port: 7001 },
        { host: '::1', port: 7002 },
      ],
      auth: { username: 'svc', password: 'secret', tls: true },
      commandTimeoutMs: 1_000,
    });
    expect(describeTopology(config.redis!)).toBe('cluster a:7000,b:7001,::1:7002');
  });

  it('REDIS_SENTINELS: the master name defaults to mymaster, the sentinel port to 26379', () => {
    const config = loadConfig({ REDIS_SENTINELS: 's1:26380,s2' });
    expect(config.redis).toMatchObject({
      kind: 'sentinel',
      sentinels: [
        { host: 's1', port: 26380 },
        { host: 's2', port: 26379 },
      ],
      master: 'mymaster',
      db: 0,
    });
  });

  it('a redis+sentinel:// URL is Sentinel too, credentials for the nodes, never shown', () => {
    const config = loadConfig({ REDIS_URL: 'redis+sentinel://u:p%40ss@s1:26379,s2:26380/orders/2' });
    expect(config.redis).toMatchObject({
      kind: 'sentinel',
      sentinels: [
        { host: 's1', port: 26379 },
        { host: 's2', port: 26380 },
      ],
      master: 'orders',
      db: 2,
      auth: { username: 'u', password: 'p@ss' },
    });
    expect(describeTopology(config.redis!)).toBe('sentinel orders via s1:26379,s2:26380');
    expect(loadConfig({ REDIS_URL: 'redis+sentinel://s1', REDIS_SENTINEL_MASTER: 'm2' }).redis).toMatchObject({ master: 'm2' });
  });

  it('two topologies at once: a start-up error naming both', () => {
    expect(() => loadConfig({ REDIS_URL: 'redis://a:6379', REDIS_CLUSTER_NODES: 'b:7000' })).toThrow(ConfigError);
    expect(() => loadConfig({ REDIS_URL: 'redis://a:6379', REDIS_CLUSTER_NODES: 'b:7000' })).toThrow(/REDIS_URL and REDIS_CLUSTER_NODES/);
    expect(() => loadConfig({ REDIS_SENTINELS: 's:26379', REDIS_CLUSTER_NODES: 'b:7000' })).toThrow(
      /REDIS_CLUSTER_NODES and REDIS_SENTINELS/,
    );
  });

  it('REDIS_PREFIX may carry one whole hash tag, nothing unbalanced', () => {
    expect(loadConfig({ REDIS_PREFIX: '{svc}' }).REDIS_PREFIX).toBe('{svc}');
    expect(loadConfig({ REDIS_PREFIX: 'acme:prod' }).REDIS_PREFIX).toBe('acme:prod');
    for (const bad of ['svc{', '{svc}{x}', '{}', 'a b']) expect(() => loadConfig({ REDIS_PREFIX: bad })).toThrow(ConfigError);
  });

  it('a URL of another scheme is refused', () => {
    expect(() => loadConfig({ REDIS_URL: 'http://a:6379' })).toThrow(/REDIS_URL/);
  });
});
