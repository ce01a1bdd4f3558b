/**
 * What production runs: `npm run build` compiles every package, and the image's processes run
 * `node` on the built files directly (no npm, shell or tsx between the orchestrator and the
 * process that drains). Every container command of compose, Kubernetes and the Dockerfile names a
 * file the build produces, and those files serve: the embedded gateway, the distributed gateway
 * with a built qr-worker, the built keys CLI.
 */
import { execFile, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import {
  awaitRunBuild,
  dropPrefix,
  exitOf,
  scanSvg,
  spawnCommand,
  spawnNodeBuilt,
  stopProcessTree,
  testRedisUrl,
  uniquePrefix,
  waitUntil,
  freePort,
  childEnv,
} from '@svc/testkit';

const run = promisify(execFile);

/** Every `command` of compose and the k8s Deployments, and the Dockerfile's CMD. */
function containerCommands(): string[][] {
  const compose = parse(readFileSync('docker-compose.yml', 'utf8')) as {
    services: Record<string, { command?: string[]; image?: string; build?: unknown }>;
  };
  const ours = Object.values(compose.services).filter(
    (service) => service.image?.startsWith('email-qr-service') || service.build !== undefined,
  );
  const k8s = ['k8s/base/gateway.yaml', 'k8s/base/qr-worker.yaml', 'k8s/base/verify-worker.yaml'].flatMap((file) =>
    parseAllDocuments(readFileSync(file, 'utf8'))
      .map(
        (document) =>
          document.toJSON() as { kind?: string; spec?: { template?: { spec?: { containers?: Array<{ command?: string[] }> } } } },
      )
      .filter((object) => object.kind === 'Deployment')
      .flatMap((object) => object.spec?.template?.spec?.containers ?? []),
  );
  const dockerfileCmd = /^CMD (\[.*\])$/m.exec(readFileSync('Dockerfile', 'utf8'))?.[1];
  return [
    ...ours.map((service) => service.command ?? []),
    ...k8s.map((container) => container.command ?? []),
    JSON.parse(dockerfileCmd ?? '[]') as string[],
  ];
}

describe('the build', () => {
  beforeAll(async () => {
    // `npm run build:emit`, which the global setup started for the run (incremental: a no-op when CI
    // built already).
    await awaitRunBuild(180_000);
  }, 200_000);

  it('every container command is node on a built file', () => {
    const commands = containerCommands();
    expect(commands.length).toBeGreaterThanOrEqual(7);
    for (const command of commands) {
      expect(command[0]).toBe('node');
      expect(command[1]).toMatch(/^services\/[a-z-]+\/dist\/[a-z-]+\.js$/);
      expect(existsSync(command[1]!), `${command[1]} is built`).toBe(true);
    }
  });

  it('the image holds every workspace package the services run on, with its built files', () => {
    const dockerfile = readFileSync('Dockerfile', 'utf8');
    const manifest = (dir: string) =>
      JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name: string; dependencies?: Record<string, string> };
    const dirOf = new Map(
      ['libs/shared', 'services'].flatMap((group) =>
        readdirSync(group).map((name) => [manifest(join(group, name)).name, `${group}/${name}`] as const),
      ),
    );
    const needed = new Set<string>();
    const visit = (dir: string) => {
      for (const dependency of Object.keys(manifest(dir).dependencies ?? {})) {
        const found = dirOf.get(dependency);
        if (found === undefined || needed.has(found)) continue;
        needed.add(found);
        visit(found);
      }
    };
    for (const service of ['services/gateway', 'services/qr-worker', 'services/verify-worker']) visit(service);
    expect(needed.size).toBeGreaterThanOrEqual(9);
    for (const dir of needed) {
      expect(dockerfile, dir).toContain(`COPY ${dir}/package.json ${dir}/`);
      expect(dockerfile, dir).toContain(`COPY --from=build /app/${dir}/dist ${dir}/dist`);
    }
  });

  it('copies every Lua script the Redis stores read beside its built module', () => {
    const packages = ['libs/shared', 'services'].flatMap((root) => readdirSync(root).map((name) => `${root}/${name}`));
    const scripts = packages.flatMap((dir) =>
      existsSync(`${dir}/src`)
        ? readdirSync(`${dir}/src`, { recursive: true, encoding: 'utf8' })
            .filter((file) => file.endsWith('.lua'))
            .map((file) => `${dir}/src/${file}`)
        : [],
    );
    // The stores of lists, metering, feedback, rate limits, MCP calls, session slots and back-offs.
    expect(scripts.length).toBeGreaterThanOrEqual(20);
    for (const script of scripts) {
      const built = script.replace('/src/', '/dist/');
      expect(existsSync(built), `${built} is built`).toBe(true);
    }
  });

  describe('built processes', () => {
    const children: ChildProcess[] = [];
    const prefix = uniquePrefix('built');
    afterAll(async () => {
      await Promise.all(children.map((child) => stopProcessTree(child)));
      await dropPrefix(testRedisUrl(), prefix);
    });

    it('embedded mode serves a scannable QR code, and loads no BullMQ, Redis client or MCP SDK until a tool server is called', async () => {
      const port = await freePort();
      const loaded = join(mkdtempSync(join(tmpdir(), 'packages-')), 'loaded.txt');
      const child = spawnCommand(
        process.execPath,
        ['--conditions=production', '--import', './test/process/fixtures/record-packages.mjs', 'scripts/dist/start.js'],
        { env: childEnv({ REDIS_URL: '', PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', RECORD_PACKAGES_FILE: loaded }) },
      );
      children.push(child);
      let output = '';
      child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      await waitUntil(() => /sk_[A-Za-z0-9]{32}/.test(output), 20_000, 'the development key');
      const key = /sk_[A-Za-z0-9]{32}/.exec(output)![0];
      const response = await fetch(`http://127.0.0.1:${port}/v1/qr/qr?data=built`, { headers: { authorization: `Bearer ${key}` } });
      expect(response.status).toBe(200);
      expect(scanSvg(await response.text())).toBe('built');

      const packages = () => new Set(readFileSync(loaded, 'utf8').split('\n'));
      expect(packages()).toContain('fastify');
      for (const heavy of ['bullmq', 'ioredis', '@modelcontextprotocol/server', 'ajv']) expect(packages()).not.toContain(heavy);
      const tools = await fetch(`http://127.0.0.1:${port}/api/mcp/qr`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(tools.status).toBe(200);
      expect(packages()).toContain('@modelcontextprotocol/server');
    }, 30_000);

    it('distributed mode: the keys CLI issues a key, the gateway and a qr-worker serve with it, SIGTERM exits 0', async () => {
      const env = childEnv({ REDIS_URL: testRedisUrl(), REDIS_PREFIX: prefix, LOG_LEVEL: 'warn' });
      const created = await run(
        process.execPath,
        ['--conditions=production', 'services/gateway/dist/keys-cli.js', 'create', '--name', 'built'],
        { env, timeout: 20_000 },
      );
      const key = /sk_[A-Za-z0-9]{32}/.exec(created.stdout)?.[0];
      expect(key).toBeDefined();

      const port = await freePort();
      const gateway = spawnNodeBuilt('services/gateway/dist/main.js', { env: { ...env, PORT: String(port), HOST: '127.0.0.1' } });
      const worker = spawnNodeBuilt('services/qr-worker/dist/main.js', {
        env: { ...env, WORKER_METRICS_PORT: String(await freePort()), WORKER_METRICS_HOST: '127.0.0.1' },
      });
      children.push(gateway, worker);
      await waitUntil(
        async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.status === 200,
        20_000,
        'the built gateway',
      );
      const response = await fetch(`http://127.0.0.1:${port}/v1/qr/qr?data=distributed`, { headers: { authorization: `Bearer ${key}` } });
      expect(response.status).toBe(200);
      expect(scanSvg(await response.text())).toBe('distributed');

      const exited = exitOf(gateway);
      gateway.kill('SIGTERM');
      await expect(exited).resolves.toBe(0);
    }, 40_000);
  });
});
