/** `qr.wifi`: a code that joins a phone to a wifi network; its schemas build the escaped WIFI: payload. */
import { qrValidationError, wifiQuerySchema, wifiToolInputObject, wifiToolInputSchema } from '@svc/contracts';
import { qrOperation } from './qr-code.ts';

export const qrWifi = qrOperation('qr.wifi', {
  rest: wifiQuerySchema,
  tool: wifiToolInputSchema,
  advertised: wifiToolInputObject,
  invalid: qrValidationError,
});
