// The meter moved to @svc/metering so that verify-workers can bill list units with it.
export { RedisMeter } from '@svc/metering';
