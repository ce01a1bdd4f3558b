/** `qr.generate`: text or a URL as a QR code. */
import { qrQuerySchema, qrToolInputObject, qrToolInputSchema, qrValidationError } from '@svc/contracts';
import { QR_PARAMETER_ERRORS } from '../openapi-examples.ts';
import { qrOperation, type QrRouteDocs } from './qr-code.ts';

export const qrGenerate = qrOperation('qr.generate', {
  rest: qrQuerySchema,
  // The tool always answers SVG and PNG: its schema asks the job for both.
  tool: qrToolInputSchema,
  advertised: qrToolInputObject,
  invalid: qrValidationError,
});

export const qrGenerateDocs: QrRouteDocs = {
  url: '/v1/qr/qr',
  operationId: 'generateQrCode',
  summary: 'Generate a QR code',
  description:
    'Encodes text or a URL at error-correction level M in the smallest version (1 to 10) that holds it, as an SVG image ' +
    '(`format=svg`, the default) or as the module matrix (`format=json`). Dark and light colours must contrast enough for ' +
    'standard readers; every code rendered scans back to `data`.',
  errors: QR_PARAMETER_ERRORS,
};
