import { MAX_DATA_CODE_POINTS, type QrJobPayload, type QrJobResult } from '@svc/contracts';
import { encodeText, MAX_VERSION } from './encoder/index.ts';
import { matrixBody } from './matrix.ts';
import { renderPng } from './png.ts';
import { renderSvg } from './svg.ts';

export const SVG_CONTENT_TYPE = 'image/svg+xml; charset=utf-8';
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** Renders one QR job; pure and synchronous (the bare-render benchmark calls it in a loop). */
export function renderQr(payload: QrJobPayload): QrJobResult {
  const matrix = encodeText(payload.data);
  if (matrix === undefined) {
    return {
      ok: false,
      error: {
        error: 'content_too_long',
        message: `\`data\` does not fit a version ${MAX_VERSION} QR code at level M (about 213 bytes of text, ${MAX_DATA_CODE_POINTS} characters at most).`,
        details: { param: 'data' },
      },
    };
  }
  const common = { ok: true as const, version: matrix.version, size: matrix.size, margin: payload.margin, format: payload.format };
  if (payload.format === 'json')
    return { ...common, contentType: JSON_CONTENT_TYPE, body: JSON.stringify(matrixBody(matrix, payload.margin)) };
  const svg = { ...common, contentType: SVG_CONTENT_TYPE, body: renderSvg(matrix, payload) };
  return payload.png === true ? { ...svg, png: renderPng(matrix, payload).toString('base64') } : svg;
}
