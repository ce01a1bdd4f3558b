import { ApiError, QR_JOB, qrQuerySchema, qrValidationError, wifiQuerySchema, type OperationId, type QrJobPayload } from '@svc/contracts';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { errorResponses } from '../openapi-schemas.ts';
import { callOf, type JobRunner } from '../operation.ts';
import { validated } from '../plugins/validation.ts';
import { BEARER_SECURITY } from './guards.ts';

const QR_ROUTES: Array<{ url: string; operation: OperationId; query: z.ZodType; summary: string; description: string }> = [
  {
    url: '/v1/qr/qr',
    operation: 'qr.generate',
    query: qrQuerySchema,
    summary: 'Generate a QR code',
    description: 'Encodes text or a URL at error-correction level M as an SVG image, or as the JSON module matrix.',
  },
  {
    url: '/v1/qr/wifi',
    operation: 'qr.wifi',
    query: wifiQuerySchema,
    summary: 'Generate a wifi network-join QR code',
    description: 'Builds a `WIFI:` payload (escaping `\\ ; , : "`) that phones read to join the network.',
  },
];

export function qrRoutes(app: FastifyInstance, options: { runner: JobRunner }, done: (error?: Error) => void): void {
  for (const route of QR_ROUTES) {
    app.get(
      route.url,
      {
        config: { operation: route.operation, auth: 'key' },
        schema: {
          tags: ['qr'],
          summary: route.summary,
          description: route.description,
          security: BEARER_SECURITY,
          querystring: validated(route.query, qrValidationError),
          response: { 200: z.string().describe('SVG image (format=svg) or JSON module matrix (format=json)'), ...errorResponses },
        },
      },
      async (request, reply) => {
        const result = await options.runner.run(route.operation, QR_JOB, request.query as QrJobPayload, callOf(request));
        if (!result.ok) throw new ApiError(result.error.error, result.error.message, { details: result.error.details });
        await app.charge(request, reply, route.operation);
        return reply.type(result.contentType).send(result.body);
      },
    );
  }
  done();
}
