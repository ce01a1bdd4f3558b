/**
 * The qr tool server: QR codes for text and URLs, and wifi network-join codes. A result shows
 * the code as a PNG `image` block (what chat clients display) followed by the SVG as text.
 * Arguments are the REST query parameters as JSON values; the operations (operations/qr-*.ts)
 * validate them, run the job and refuse alike through both doors: this file presents the code.
 */
import { OPERATIONS, qrToolOutputSchema } from '@svc/contracts';
import type { McpServer } from '@modelcontextprotocol/server';
import type { QrCode, QrOperation } from '../operations/qr-code.ts';
import { qrGenerate } from '../operations/qr-generate.ts';
import { qrWifi } from '../operations/qr-wifi.ts';
import { advertisedInput } from './advertised-schema.ts';
import { operationTool } from './operation-tool.ts';
import { imageContent, textContent, type ToolContext, type ToolOutput } from './tool-result.ts';

const ANNOTATIONS = { readOnlyHint: true, idempotentHint: true, openWorldHint: false } as const;

const RENDERING =
  'Rendered at error-correction level M: `scale` pixels per module (1-40, default 8), a quiet zone of `margin` modules ' +
  '(0-20, default 4; below 4 harms scanning), `dark`/`light` hex colours as JSON strings, RGB, RGBA, RRGGBB or RRGGBBAA with or ' +
  'without a leading # (`"#336699"` or `"336699"`; no URL encoding), dark enough against light to scan. ' +
  'Returns the code as a PNG image, then its SVG markup as text; the structured result holds the SVG, the QR version, ' +
  'its size in modules and the margin.';

interface QrTool {
  operation: QrOperation;
  title: string;
  description: string;
}

const QR_TOOLS: QrTool[] = [
  {
    operation: qrGenerate,
    title: 'Generate a QR code',
    description:
      'Encode text or a URL as a QR code. `data` takes up to 800 characters, of which about 213 bytes of UTF-8 fit (more for digits or ' +
      `upper-case text). ${RENDERING} For a code that joins a phone to a wifi network use ${OPERATIONS['qr.wifi'].tool} instead.`,
  },
  {
    operation: qrWifi,
    title: 'Generate a wifi network-join QR code',
    description:
      'Make a QR code that joins a phone to a wifi network when scanned: give the network name `ssid`, the `password` and `security` ' +
      '(WPA, WEP or nopass, any case; default WPA; WPA2 is written as WPA) and whether the network is `hidden`; the WIFI: payload is built and escaped for you. ' +
      `${RENDERING} Use this rather than ${OPERATIONS['qr.generate'].tool} for any wifi code.`,
  },
];

export const QR_SERVER_INSTRUCTIONS = `QR codes as PNG images and SVG. Use ${OPERATIONS['qr.generate'].tool} for text and URLs, ${OPERATIONS['qr.wifi'].tool} for wifi network-join codes.`;

/** The code as the tool answers it: the structured result, a PNG image block, then the SVG as text. */
function codeOutput(code: QrCode): ToolOutput {
  const structured = qrToolOutputSchema.parse({ svg: code.body, version: code.version, size: code.size, margin: code.margin });
  // A worker that predates PNG rendering (a rolling upgrade) answers without it.
  if (code.png === undefined) throw new Error('the qr job answered without the PNG it was asked for');
  return { structured, content: [imageContent(code.png, 'image/png'), textContent(structured.svg)] };
}

export function registerQrTools(server: McpServer, context: ToolContext): void {
  for (const { operation, title, description } of QR_TOOLS) {
    server.registerTool(
      OPERATIONS[operation.id].tool,
      {
        title,
        description,
        inputSchema: advertisedInput(operation.input.advertised),
        outputSchema: qrToolOutputSchema,
        annotations: { title, ...ANNOTATIONS },
      },
      operationTool(context, operation, codeOutput),
    );
  }
}
