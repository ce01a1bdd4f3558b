/** `qr.generate`: text or a URL as a QR code. */
import { qrQuerySchema, qrToolInputObject, qrToolInputSchema, qrValidationError } from '@svc/contracts';
import { qrOperation } from './qr-code.ts';

export const qrGenerate = qrOperation('qr.generate', {
  rest: qrQuerySchema,
  // The tool always answers SVG and PNG: its schema asks the job for both.
  tool: qrToolInputSchema,
  advertised: qrToolInputObject,
  invalid: qrValidationError,
});
