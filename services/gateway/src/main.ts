import { loadConfig } from '@svc/config';
import { startDistributedGateway } from './distributed.ts';

await startDistributedGateway(loadConfig());
