import type { TestProject } from 'vitest/node';
import { findRedis } from './find-redis.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const redis = await findRedis();
  console.log(`[tests] Redis from ${redis.source}: ${redis.url}`);
  project.provide('redisUrl', redis.url);
  return redis.stop;
}
