/**
 * The QR operations' REST door: `GET /v1/qr/qr` and `GET /v1/qr/wifi`. The query string is the
 * operation's input; the rendered code is answered as its body (SVG or the JSON matrix). Each
 * route's path and OpenAPI words are its operation's (operations/qr-*.ts).
 */
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { MATRIX_EXAMPLE, SVG_EXAMPLE } from '../openapi-examples.ts';
import { meteredResponses, qrMatrixSchema, svgSchema } from '../openapi-schemas.ts';
import { callOf, type JobRunner } from '../operation.ts';
import { start } from '../operations/operation.ts';
import type { QrOperation, QrRouteDocs } from '../operations/qr-code.ts';
import { qrGenerate, qrGenerateDocs } from '../operations/qr-generate.ts';
import { qrWifi, qrWifiDocs } from '../operations/qr-wifi.ts';
import { validated } from '../plugins/validation.ts';
import { BEARER_SECURITY } from './guards.ts';

/** Each QR operation with its route's documentation (operations/qr-*.ts). */
const QR_ROUTES: Array<QrRouteDocs & { operation: QrOperation }> = [
  { ...qrGenerateDocs, operation: qrGenerate },
  { ...qrWifiDocs, operation: qrWifi },
];

const QR_SUCCESS = {
  description: 'The QR code: an SVG image for `format=svg`, the module matrix for `format=json`.',
  content: {
    'image/svg+xml': { schema: svgSchema, example: SVG_EXAMPLE },
    'application/json': { schema: qrMatrixSchema, example: MATRIX_EXAMPLE },
  },
};

export const qrRoutes: FastifyPluginCallbackZod<{ runner: JobRunner }> = (app, options, done) => {
  for (const route of QR_ROUTES) {
    const { operation } = route;
    app.get(
      route.url,
      {
        config: { operation: operation.id, auth: 'key' },
        schema: {
          operationId: route.operationId,
          tags: ['qr'],
          summary: route.summary,
          description: route.description,
          security: BEARER_SECURITY,
          querystring: validated(operation.input.rest, operation.input.invalid),
          response: meteredResponses(QR_SUCCESS, {
            description:
              'A parameter is missing, malformed, out of range or unknown (`invalid_parameter`, `details.param` names it), or `data` does not fit (`content_too_long`).',
            examples: route.errors,
          }),
        },
      },
      async (request, reply) => {
        // start and answer rather than perform(): the QR path awaits the runner's own promise, no
        // promise of ours around it (the in-process QR job settles on the spot; see bench:qr).
        const code = operation.answer(request.query, await start(operation, options.runner, request.query, callOf(request)));
        await app.charge(request, reply);
        return reply.type(code.contentType).send(code.body);
      },
    );
  }
  done();
};
