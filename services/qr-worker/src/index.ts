import { QR_JOB } from '@svc/contracts';
import { registerHandler } from '@svc/jobs';
import { renderQr } from './render.ts';

export { renderQr, type SvgBody } from './render.ts';
export { encodeText, type ModuleMatrix, type QrSymbol } from './encoder/index.ts';
export { renderSvg } from './svg.ts';
export { renderPng } from './png.ts';
export { matrixBody } from './matrix.ts';

/** The qr-worker's handler: its answer crosses the queue as JSON, so its SVG is text. */
export const qrJobHandler = registerHandler(QR_JOB, (payload) => renderQr(payload, 'text'));
/** Embedded mode's: its answer stays in the process, so its SVG is bytes (render.ts). */
export const qrInProcessHandler = registerHandler(QR_JOB, (payload) => renderQr(payload, 'bytes'));
