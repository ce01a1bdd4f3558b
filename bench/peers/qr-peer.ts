/**
 * The do-it-yourself route the product competes with: a bare fastify server calling node-qrcode's
 * `toString` as its README shows, level M, no authentication, validation, metering or logging.
 * `PORT` and `HOST` from the environment; stops on SIGTERM.
 */
import Fastify from 'fastify';
import QRCode from 'qrcode';

const app = Fastify();

app.get<{ Querystring: { data?: string } }>('/qr', async (request, reply) => {
  const svg = await QRCode.toString(request.query.data ?? '', { type: 'svg', errorCorrectionLevel: 'M' });
  return reply.type('image/svg+xml').send(svg);
});

await app.listen({ port: Number(process.env.PORT ?? 3100), host: process.env.HOST ?? '127.0.0.1' });
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
