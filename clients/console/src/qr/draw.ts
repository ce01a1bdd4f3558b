/**
 * The QR studio's pure parts: the form's values checked by the service's own rules
 * (@svc/contracts/qr-rules, the messages the API would give), the code encoded by the product's
 * own encoder (@svc/qr-worker/encoder, the one the qr-worker runs), the preview drawn from its
 * module matrix, the file names and the print size. Nothing here calls the API: looking is free.
 */
import {
  MARGIN,
  MAX_DATA_CODE_POINTS,
  SCALE,
  SSID_PROBLEM,
  buildWifiPayload,
  colourProblem,
  normaliseColour,
  passwordProblem,
  ssidFits,
  type Security,
} from '@svc/contracts/qr-rules';
import { MAX_VERSION, encodeText, type ModuleMatrix } from '@svc/qr-worker/encoder';

export interface Look {
  scale: string;
  margin: string;
  dark: string;
  light: string;
}
export type Content =
  { kind: 'text'; data: string } | { kind: 'wifi'; ssid: string; password: string; security: Security; hidden: boolean };

/** What the form asks for, checked: the API path and query of a download, the encoded text, the rendering. */
export interface Request {
  path: '/v1/qr/qr' | '/v1/qr/wifi';
  query: URLSearchParams;
  data: string;
  scale: number;
  margin: number;
  dark: string;
  light: string;
}

const whole = (value: string, [min, max]: readonly [number, number, ...unknown[]], name: string): number => {
  // As the API reads query text: digits only are a number; anything else is not a whole number.
  if (!/^\d{1,6}$/.test(value)) throw new Error(`\`${name}\` must be a whole number from ${min} to ${max}.`);
  const number = Number(value);
  if (number < min || number > max) throw new Error(`\`${name}\` must be from ${min} to ${max}.`);
  return number;
};

/** The request of a download, or an Error with the message the API would answer. */
export function requestOf(content: Content, look: Look): Request {
  const scale = whole(look.scale, SCALE, 'scale');
  const margin = whole(look.margin, MARGIN, 'margin');
  const dark = normaliseColour(look.dark);
  const light = normaliseColour(look.light);
  if (dark === undefined) throw new Error('`dark` must be a hex colour such as 1a2b3c or 1a2b3c80 (RGB, RGBA, RRGGBB or RRGGBBAA).');
  if (light === undefined) throw new Error('`light` must be a hex colour such as 1a2b3c or 1a2b3c80 (RGB, RGBA, RRGGBB or RRGGBBAA).');
  const query = new URLSearchParams();
  let data: string;
  if (content.kind === 'text') {
    if (content.data === '') throw new Error('`data` must not be empty.');
    if ([...content.data].length > MAX_DATA_CODE_POINTS) throw new Error(`\`data\` may hold at most ${MAX_DATA_CODE_POINTS} characters.`);
    query.set('data', content.data);
    data = content.data;
  } else {
    if (!ssidFits(content.ssid)) throw new Error(`\`ssid\` ${SSID_PROBLEM}.`);
    const password = content.security === 'nopass' ? undefined : content.password;
    const problem = passwordProblem(content.security, password);
    if (problem !== undefined) throw new Error(`\`password\` ${problem}.`);
    query.set('ssid', content.ssid);
    if (password !== undefined) query.set('password', password);
    query.set('security', content.security);
    query.set('hidden', String(content.hidden));
    data = buildWifiPayload(content.ssid, content.security, password ?? '', content.hidden);
  }
  const colours = colourProblem(dark, light);
  if (colours !== undefined) throw new Error(`\`${colours[0]}\` ${colours[1]}.`);
  query.set('scale', String(scale));
  query.set('margin', String(margin));
  query.set('dark', look.dark);
  query.set('light', look.light);
  return { path: content.kind === 'text' ? '/v1/qr/qr' : '/v1/qr/wifi', query, data, scale, margin, dark, light };
}

/** The symbol of the request's text, or the API's `content_too_long` message. */
export function encode(request: Request): ModuleMatrix {
  const matrix = encodeText(request.data);
  if (matrix === undefined)
    throw new Error(
      `\`data\` does not fit a version ${MAX_VERSION} QR code at level M (about 213 bytes of text, ${MAX_DATA_CODE_POINTS} characters at most).`,
    );
  return matrix;
}

const paint = (colour: string) => {
  const opacity = Number.parseInt(colour.slice(7), 16) / 255;
  return `fill="${colour.slice(0, 7)}"${opacity >= 1 ? '' : ` fill-opacity="${Number(opacity.toFixed(3))}"`}`;
};

/** The preview as SVG text, drawn as the service draws it (pixel size, viewBox in modules, one path of runs). */
export function previewSvg(matrix: ModuleMatrix, request: Request): string {
  const modules = matrix.size + 2 * request.margin;
  const pixels = modules * request.scale;
  let path = '';
  for (let y = 0; y < matrix.size; y += 1) {
    for (let x = 0; x < matrix.size; x += 1) {
      if (matrix.modules[y * matrix.size + x] !== 1) continue;
      let run = 1;
      while (x + run < matrix.size && matrix.modules[y * matrix.size + x + run] === 1) run += 1;
      path += `M${x + request.margin} ${y + request.margin}h${run}v1h-${run}z`;
      x += run - 1;
    }
  }
  // Colours reach the markup only normalised (#rrggbbaa, matched by the rule above).
  const background = request.light.slice(7) === '00' ? '' : `<rect width="${modules}" height="${modules}" ${paint(request.light)}/>`;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${pixels}" height="${pixels}" viewBox="0 0 ${modules} ${modules}" shape-rendering="crispEdges">${background}<path ${paint(request.dark)} d="${path}"/></svg>`;
}

/** Pixels per side of a PNG for print: a whole number of pixels per module, at least 1,200 in all. */
export const PRINT_PIXELS = 1_200;
export const printSide = (modules: number): number => modules * Math.ceil(PRINT_PIXELS / modules);

/**
 * A file name from the content (without extension): a URL's host and path, a text's first
 * words, a network's name; letters and digits kept (accents included), the rest as `-`.
 */
export function fileNameOf(content: Content): string {
  const source = content.kind === 'wifi' ? `wifi ${content.ssid}` : content.data.replace(/^[a-z][a-z0-9+.-]*:(\/\/)?(www\.)?/i, '');
  const slug = source
    .normalize('NFC')
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
    .replace(/-+$/, '');
  return slug === '' ? 'qr-code' : `qr-${slug}`;
}
