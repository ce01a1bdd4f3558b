import { loadConfig } from '@svc/shared';
import { startDistributedGateway } from './distributed.ts';

await startDistributedGateway(loadConfig());
