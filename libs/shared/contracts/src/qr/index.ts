export { normaliseColour } from './colour.ts';
export { MARGIN, MAX_DATA_CODE_POINTS, SCALE } from './params.ts';
export { escapeWifi, buildWifiPayload } from './wifi.ts';
export * from './schemas.ts';
export { qrValidationError } from './errors.ts';
export * from './job.ts';
