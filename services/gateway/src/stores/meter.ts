// The meter moved to @svc/metering so that verify-workers can bill list units with it.
export { MemoryMeter, type Charge, type Meter, type OperationUsage } from '@svc/metering';
