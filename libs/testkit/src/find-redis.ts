/**
 * Where tests find Redis, in DEVELOPERS.md's order: `REDIS_URL` when set, else a Redis on
 * 127.0.0.1:6379, else a testcontainers Redis. When none can be had the run fails with a message
 * that says how to provide one: tests never skip silently.
 */
import { Redis } from 'ioredis';

export const NO_REDIS_MESSAGE =
  'No Redis for the tests: set REDIS_URL=redis://host:port, or run a local one ' +
  '(`apt-get install redis-server && redis-server --daemonize yes`), or provide a Docker engine for testcontainers.';

async function reachable(url: string): Promise<boolean> {
  const client = new Redis(url, { lazyConnect: true, connectTimeout: 1_000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

export interface FoundRedis {
  url: string;
  source: 'REDIS_URL' | 'local' | 'testcontainers';
  stop: () => Promise<void>;
}

export async function findRedis(env: Record<string, string | undefined> = process.env): Promise<FoundRedis> {
  const fromEnv = env.REDIS_URL;
  if (fromEnv !== undefined && fromEnv !== '') {
    if (await reachable(fromEnv)) return { url: fromEnv, source: 'REDIS_URL', stop: () => Promise.resolve() };
    throw new Error(`REDIS_URL=${fromEnv} is not reachable. ${NO_REDIS_MESSAGE}`);
  }
  const local = 'redis://127.0.0.1:6379';
  if (await reachable(local)) return { url: local, source: 'local', stop: () => Promise.resolve() };
  try {
    const { RedisContainer } = await import('@testcontainers/redis');
    const container = await new RedisContainer('redis:7-alpine').start();
    return { url: container.getConnectionUrl(), source: 'testcontainers', stop: async () => void (await container.stop()) };
  } catch (error) {
    throw new Error(`${NO_REDIS_MESSAGE} (testcontainers: ${(error as Error).message})`, { cause: error });
  }
}
