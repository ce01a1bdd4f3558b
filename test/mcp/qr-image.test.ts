/**
 * The QR tools' picture: through the SDK's own client, the first content block is a PNG that a
 * standard decoder (pngjs, then jsQR on the image composited over white, as a chat client shows
 * it) scans to exactly the data, drawn with the request's colours (alpha included), scale and
 * margin; the SVG follows as text and `structuredContent` is the SVG with its dimensions. The
 * cases are those of the SVG scan tests (test/support/qr-cases.ts).
 */
import fc from 'fast-check';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normaliseColour } from '@svc/contracts';
import { decodePng, scanPng } from '@svc/testkit';
import { startServer, type TestServer } from '../support/servers.ts';
import { COLOUR_PAIR_SCALE, RENDERING_CASES, colourPair } from '../support/qr-cases.ts';
import { connect, toolError, type Connected } from './mcp-client.ts';

let server: TestServer;
let qr: Connected;
beforeAll(async () => {
  server = await startServer('embedded', { env: { RATE_LIMIT_QR_GENERATE: '0', RATE_LIMIT_QR_WIFI: '0' } });
  qr = await connect(server, 'qr');
});
afterAll(async () => {
  await qr?.close();
  await server?.close();
});

interface Structured {
  svg: string;
  version: number;
  size: number;
  margin: number;
}

/** Porter-Duff "over" with straight alpha, in 0..255 channels. */
function over(top: number[], bottom: number[]): number[] {
  const [a, b] = [top[3]! / 255, bottom[3]! / 255];
  const alpha = a + b * (1 - a);
  if (alpha === 0) return [0, 0, 0, 0];
  return [0, 1, 2].map((i) => Math.round((top[i]! * a + bottom[i]! * b * (1 - a)) / alpha)).concat(Math.round(alpha * 255));
}

const rgba = (colour: string) => {
  const normal = normaliseColour(colour);
  if (normal === undefined) throw new Error(`not a colour: ${colour}`);
  return [1, 3, 5, 7].map((index) => Number.parseInt(normal.slice(index, index + 2), 16));
};

/** The image block, checked against the SVG and the request; returns the decoded PNG. */
function pictureOf(result: CallToolResult, args: Record<string, unknown>) {
  expect(result.isError).toBeFalsy();
  const structured = result.structuredContent as unknown as Structured;
  expect(Object.keys(structured).sort()).toEqual(['margin', 'size', 'svg', 'version']);
  expect(result.content).toHaveLength(2);
  const [image, text] = result.content;
  expect(text).toEqual({ type: 'text', text: structured.svg });
  if (image?.type !== 'image') throw new Error(`the first block is ${image?.type}, not an image`);
  expect(image.mimeType).toBe('image/png');
  const png = Buffer.from(image.data, 'base64');
  const scale = typeof args.scale === 'number' ? args.scale : 8;
  const margin = typeof args.margin === 'number' ? args.margin : 4;
  expect(structured.margin).toBe(margin);
  const decoded = decodePng(png);
  const side = (structured.size + 2 * margin) * scale;
  expect([decoded.width, decoded.height]).toEqual([side, side]);
  // The top-left finder pattern's corner is dark; the pixel before it, in the quiet zone, light.
  const pixel = (x: number, y: number) => [...decoded.pixels.subarray((y * side + x) * 4, (y * side + x) * 4 + 4)];
  const colourOf = (value: unknown, fallback: string) => rgba(typeof value === 'string' ? value : fallback);
  // A dark module shows the dark colour drawn over the light one, as the SVG does.
  expect(pixel(margin * scale, margin * scale)).toEqual(over(colourOf(args.dark, '000'), colourOf(args.light, 'fff')));
  if (margin > 0) expect(pixel(0, 0)).toEqual(colourOf(args.light, 'fff'));
  return { png, scale, margin };
}

describe('qr_generate: the PNG scans to the data', () => {
  it.each(RENDERING_CASES)('%s', async (_label, args) => {
    const { png, scale, margin } = pictureOf(await qr.callTool('qr_generate', args), args);
    // A code drawn without its full quiet zone is read on a white page with a border, as in the SVG tests.
    expect(scanPng(png, { borderModules: Math.max(0, 4 - margin), scale })).toBe(args.data);
  });

  it('any colour pair: refused on a colour argument, or a PNG in those colours that scans (property)', async () => {
    const data = 'https://example.com/readable';
    const tally = { accepted: 0, refused: 0 };
    await fc.assert(
      fc.asyncProperty(colourPair, async ([dark, light]) => {
        const args = { data, dark, light, scale: COLOUR_PAIR_SCALE };
        const result = await qr.callTool('qr_generate', args);
        if (result.isError === true) {
          tally.refused += 1;
          expect(toolError(result)).toMatchObject({
            error: 'invalid_parameter',
            details: { param: expect.stringMatching(/^(dark|light)$/) },
          });
          return;
        }
        tally.accepted += 1;
        expect(scanPng(pictureOf(result, args).png), `dark=${dark} light=${light}`).toBe(data);
      }),
      // Translucent dark over translucent light: the PNG once drew the dark colour alone, lighter
      // than the contrast the readability rule measured, and it did not scan.
      { numRuns: 80, examples: [[['00000073', '0000003d']]] },
    );
    expect(tally.accepted).toBeGreaterThan(20);
    expect(tally.refused).toBeGreaterThan(5);
  });
});

describe('qr_wifi: the PNG scans to the escaped payload', () => {
  it.each<[string, Record<string, unknown>, string]>([
    [
      'every escaped character',
      { ssid: 'a\\b;c,d:e"f', password: 'p\\;,:"word', hidden: true },
      'WIFI:T:WPA;S:a\\\\b\\;c\\,d\\:e\\"f;P:p\\\\\\;\\,\\:\\"word;H:true;;',
    ],
    [
      'WPA2, written as WPA, in colours',
      { ssid: 'Home', password: 'correct-horse', security: 'wpa2', dark: '#1a237e', light: 'fff8e1' },
      'WIFI:T:WPA;S:Home;P:correct-horse;H:false;;',
    ],
    [
      'an open network on a transparent background',
      { ssid: 'Café', security: 'nopass', light: '#ffffff00', scale: 4 },
      'WIFI:T:nopass;S:Café;P:;H:false;;',
    ],
  ])('%s', async (_label, args, payload) => {
    const { png } = pictureOf(await qr.callTool('qr_wifi', args), args);
    expect(scanPng(png)).toBe(payload);
  });
});
