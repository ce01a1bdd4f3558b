export * from './billing.ts';
export { MemoryMeter, type Charge, type LedgerState, type Meter, type OperationUsage, type UnitsRecorded } from './meter.ts';
export { MeterLateError, RedisMeter } from './redis-meter.ts';
