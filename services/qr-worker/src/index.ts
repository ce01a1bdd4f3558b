import { QR_JOB } from '@svc/contracts';
import { registerHandler } from '@svc/jobs';
import { renderQr } from './render.ts';

export { renderQr } from './render.ts';
export { encodeText, type ModuleMatrix, type QrSymbol } from './encoder/index.ts';
export { renderSvg } from './svg.ts';
export { renderPng } from './png.ts';
export { matrixBody } from './matrix.ts';

export const qrJobHandler = registerHandler(QR_JOB, (payload) => renderQr(payload));
