export * from './billing.ts';
export {
  CHARGE_ID_TTL_MS,
  MemoryMeter,
  MeterLateError,
  MeterUnsureError,
  type Charge,
  type ChargeCall,
  type LedgerState,
  type Meter,
  type OperationUsage,
  type UnitsRecorded,
} from './meter.ts';
export { RedisMeter } from './redis-meter.ts';
export { ChargeRecorder, type ChargeRecorderOptions, type VoidReport } from './charge-recorder.ts';
