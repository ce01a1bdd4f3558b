/**
 * Encoding with `qrcode` at level M, smallest version first. Its segmenter picks numeric,
 * alphanumeric and byte (UTF-8) modes, so digits-only content fits 513 characters at version 10
 * while bytes fit 213. Content that needs a version above 10 is `content_too_long`.
 */
import QRCode from 'qrcode';

export const MAX_VERSION = 10;

export interface ModuleMatrix {
  version: number;
  size: number;
  /** Row-major, `size * size` entries, 1 = dark. */
  modules: Uint8Array;
}

export type EncodeOutcome = { ok: true; matrix: ModuleMatrix } | { ok: false; reason: 'content_too_long' };

export function encode(data: string): EncodeOutcome {
  let qr: QRCode.QRCode;
  try {
    qr = QRCode.create(data, { errorCorrectionLevel: 'M' });
  } catch {
    // qrcode throws only when the content exceeds version 40.
    return { ok: false, reason: 'content_too_long' };
  }
  if (qr.version > MAX_VERSION) return { ok: false, reason: 'content_too_long' };
  const size = qr.modules.size;
  const modules = new Uint8Array(size * size);
  for (let i = 0; i < modules.length; i += 1) modules[i] = qr.modules.data[i] ? 1 : 0;
  return { ok: true, matrix: { version: qr.version, size, modules } };
}
