export * from './billing.ts';
export * from './meter.ts';
export { RedisMeter } from './redis-meter.ts';
export { ChargeRecorder, type ChargeRecorderOptions, type VoidReport } from './charge-recorder.ts';
