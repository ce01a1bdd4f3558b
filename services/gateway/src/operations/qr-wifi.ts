/** `qr.wifi`: a code that joins a phone to a wifi network; its schemas build the escaped WIFI: payload. */
import { qrValidationError, wifiQuerySchema, wifiToolInputObject, wifiToolInputSchema } from '@svc/contracts';
import { WIFI_PARAMETER_ERRORS } from '../openapi-examples.ts';
import { qrOperation, type QrRouteDocs } from './qr-code.ts';

export const qrWifi = qrOperation('qr.wifi', {
  rest: wifiQuerySchema,
  tool: wifiToolInputSchema,
  advertised: wifiToolInputObject,
  invalid: qrValidationError,
});

export const qrWifiDocs: QrRouteDocs = {
  url: '/v1/qr/wifi',
  operationId: 'generateWifiQrCode',
  summary: 'Generate a wifi network-join QR code',
  description:
    'Builds the `WIFI:T:<security>;S:<ssid>;P:<password>;H:<hidden>;;` payload (escaping `\\ ; , : "`) that phones read to ' +
    'join the network, and renders it like `GET /v1/qr/qr`.',
  errors: WIFI_PARAMETER_ERRORS,
};
