/**
 * The qr tool server: QR codes for text and URLs, and wifi network-join codes. A result shows
 * the code as a PNG `image` block (what chat clients display) followed by the SVG as text.
 * Arguments are the REST query parameters as JSON values, validated and mapped to errors by the
 * QR contract's own code, so both doors answer alike.
 */
import {
  ApiError,
  OPERATIONS,
  QR_JOB,
  qrToolInputObject,
  qrToolInputSchema,
  qrToolOutputSchema,
  qrValidationError,
  wifiToolInputObject,
  wifiToolInputSchema,
  type OperationId,
  type QrJobPayload,
} from '@svc/contracts';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { z } from 'zod';
import { advertisedInput, parseArguments } from './advertised-schema.ts';
import { imageContent, runTool, textContent, type ToolContext } from './tool-result.ts';

const ANNOTATIONS = { readOnlyHint: true, idempotentHint: true, openWorldHint: false } as const;

const RENDERING =
  'Rendered at error-correction level M: `scale` pixels per module (1-40, default 8), a quiet zone of `margin` modules ' +
  '(0-20, default 4; below 4 harms scanning), `dark`/`light` hex colours as JSON strings, RGB, RGBA, RRGGBB or RRGGBBAA with or ' +
  'without a leading # (`"#336699"` or `"336699"`; no URL encoding), dark enough against light to scan. ' +
  'Returns the code as a PNG image, then its SVG markup as text; the structured result holds the SVG, the QR version, ' +
  'its size in modules and the margin.';

interface QrTool {
  operation: OperationId;
  title: string;
  description: string;
  /** What clients are shown; `parse` adds the cross-field rules and builds the job. */
  advertised: z.ZodObject;
  parse: z.ZodType<QrJobPayload>;
}

const QR_TOOLS: QrTool[] = [
  {
    operation: 'qr.generate',
    title: 'Generate a QR code',
    description:
      'Encode text or a URL as a QR code. `data` takes up to 800 characters, of which about 213 bytes of UTF-8 fit (more for digits or ' +
      `upper-case text). ${RENDERING} For a code that joins a phone to a wifi network use ${OPERATIONS['qr.wifi'].tool} instead.`,
    advertised: qrToolInputObject,
    parse: qrToolInputSchema,
  },
  {
    operation: 'qr.wifi',
    title: 'Generate a wifi network-join QR code',
    description:
      'Make a QR code that joins a phone to a wifi network when scanned: give the network name `ssid`, the `password` and `security` ' +
      '(WPA, WEP or nopass, any case; default WPA; WPA2 is written as WPA) and whether the network is `hidden`; the WIFI: payload is built and escaped for you. ' +
      `${RENDERING} Use this rather than ${OPERATIONS['qr.generate'].tool} for any wifi code.`,
    advertised: wifiToolInputObject,
    parse: wifiToolInputSchema,
  },
];

export const QR_SERVER_INSTRUCTIONS = `QR codes as PNG images and SVG. Use ${OPERATIONS['qr.generate'].tool} for text and URLs, ${OPERATIONS['qr.wifi'].tool} for wifi network-join codes.`;

export function registerQrTools(server: McpServer, context: ToolContext): void {
  for (const tool of QR_TOOLS) {
    server.registerTool(
      OPERATIONS[tool.operation].tool,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: advertisedInput(tool.advertised),
        outputSchema: qrToolOutputSchema,
        annotations: { title: tool.title, ...ANNOTATIONS },
      },
      (args) =>
        runTool(context, tool.operation, async () => {
          const payload = parseArguments(tool.parse, args, qrValidationError);
          const result = await context.runner.run(tool.operation, QR_JOB, payload, context.call);
          if (!result.ok) throw new ApiError(result.error.error, result.error.message, { details: result.error.details });
          const structured = qrToolOutputSchema.parse({
            svg: result.body,
            version: result.version,
            size: result.size,
            margin: result.margin,
          });
          // A worker that predates PNG rendering (a rolling upgrade) answers without it.
          if (result.png === undefined) throw new Error('the qr job answered without the PNG it was asked for');
          return { structured, content: [imageContent(result.png, 'image/png'), textContent(structured.svg)] };
        }),
    );
  }
}
