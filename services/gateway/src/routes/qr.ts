import { ApiError, QR_JOB, qrQuerySchema, qrValidationError, wifiQuerySchema, type OperationId, type QrJobPayload } from '@svc/contracts';
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import { MATRIX_EXAMPLE, QR_PARAMETER_ERRORS, SVG_EXAMPLE, WIFI_PARAMETER_ERRORS, type ErrorExamples } from '../openapi-examples.ts';
import { meteredResponses, qrMatrixSchema, svgSchema } from '../openapi-schemas.ts';
import { callOf, type JobRunner } from '../operation.ts';
import { validated } from '../plugins/validation.ts';
import { BEARER_SECURITY } from './guards.ts';

interface QrRoute {
  url: string;
  operation: OperationId;
  operationId: string;
  /** Both query schemas produce the job payload: the handler gets it typed and validated. */
  query: z.ZodType<QrJobPayload, Record<string, unknown>>;
  summary: string;
  description: string;
  errors: ErrorExamples;
}

const QR_ROUTES: QrRoute[] = [
  {
    url: '/v1/qr/qr',
    operation: 'qr.generate',
    operationId: 'generateQrCode',
    query: qrQuerySchema,
    summary: 'Generate a QR code',
    description:
      'Encodes text or a URL at error-correction level M in the smallest version (1 to 10) that holds it, as an SVG image ' +
      '(`format=svg`, the default) or as the module matrix (`format=json`). Dark and light colours must contrast enough for ' +
      'standard readers; every code rendered scans back to `data`.',
    errors: QR_PARAMETER_ERRORS,
  },
  {
    url: '/v1/qr/wifi',
    operation: 'qr.wifi',
    operationId: 'generateWifiQrCode',
    query: wifiQuerySchema,
    summary: 'Generate a wifi network-join QR code',
    description:
      'Builds the `WIFI:T:<security>;S:<ssid>;P:<password>;H:<hidden>;;` payload (escaping `\\ ; , : "`) that phones read to ' +
      'join the network, and renders it like `GET /v1/qr/qr`.',
    errors: WIFI_PARAMETER_ERRORS,
  },
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
    app.get(
      route.url,
      {
        config: { operation: route.operation, auth: 'key' },
        schema: {
          operationId: route.operationId,
          tags: ['qr'],
          summary: route.summary,
          description: route.description,
          security: BEARER_SECURITY,
          querystring: validated(route.query, qrValidationError),
          response: meteredResponses(QR_SUCCESS, {
            description:
              'A parameter is missing, malformed, out of range or unknown (`invalid_parameter`, `details.param` names it), or `data` does not fit (`content_too_long`).',
            examples: route.errors,
          }),
        },
      },
      async (request, reply) => {
        const result = await options.runner.run(route.operation, QR_JOB, request.query, callOf(request));
        if (!result.ok) throw new ApiError(result.error.error, result.error.message, { details: result.error.details });
        await app.charge(request, reply, route.operation);
        return reply.type(result.contentType).send(result.body);
      },
    );
  }
  done();
};
