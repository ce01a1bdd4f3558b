/**
 * What the two QR operations share: the input of either is the job payload itself (each door's
 * schema builds it), and a job answers the rendered code or refuses what no code can hold.
 */
import { ApiError, QR_JOB, type QrJobPayload, type QrJobResult } from '@svc/contracts';
import type { ErrorExamples } from '../openapi-examples.ts';
import { defineOperation, type Operation, type OperationInput } from './operation.ts';

/** The code a worker rendered: SVG or matrix body, its content type, version, size, margin, PNG if asked. */
export type QrCode = Extract<QrJobResult, { ok: true }>;

export type QrOperation = Operation<QrJobPayload, QrJobPayload, QrJobResult, QrCode>;

/** A QR operation's REST route and its OpenAPI words (the responses' shape is the same for both: routes/qr.ts). */
export interface QrRouteDocs {
  url: string;
  operationId: string;
  summary: string;
  description: string;
  /** The examples of its `400`. */
  errors: ErrorExamples;
}

/** A worker refuses what it cannot render (`content_too_long`, unreadable colours) with the contract's error. */
function renderedCode(_payload: QrJobPayload, result: QrJobResult): QrCode {
  if (!result.ok) throw new ApiError(result.error.error, result.error.message, { details: result.error.details });
  return result;
}

// The payload is the validated input as it is: no object is made per request on the QR path.
const asPayload = (payload: QrJobPayload): QrJobPayload => payload;

export const qrOperation = (id: 'qr.generate' | 'qr.wifi', input: OperationInput<QrJobPayload>): QrOperation =>
  defineOperation({ id, input, job: QR_JOB, payload: asPayload, answer: renderedCode });
