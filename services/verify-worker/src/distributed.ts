/** Distributed mode's entry points, apart from the index so that embedded mode loads no BullMQ. */
export { startDistributedListWork, type DistributedListWork } from './lists/distributed-work.ts';
