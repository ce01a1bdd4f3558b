/**
 * The floor of this machine: a bare fastify route that answers a fixed SVG, rendered once at
 * start-up by the product's renderer from a 100-character URL like the ones the benchmark sends,
 * so that its answers have the size and content type of the product's. No QR work per request, no
 * authentication, validation, metering or logging: what any HTTP answer of that size costs here.
 * `PORT` and `HOST` from the environment; stops on SIGTERM.
 */
import Fastify from 'fastify';
import { renderQr } from '@svc/qr-worker';

const sample = renderQr({
  data: `https://example.com/orders/0000000000?ref=${'newsletter-spring-campaign-'.repeat(4)}`.slice(0, 100),
  format: 'svg',
  scale: 8,
  margin: 4,
  dark: '#000000ff',
  light: '#ffffffff',
});
if (!sample.ok) throw new Error('the floor sample does not encode');
const { contentType, body } = sample;

const app = Fastify();
app.get('/qr', (_request, reply) => reply.type(contentType).send(body));

await app.listen({ port: Number(process.env.PORT ?? 3101), host: process.env.HOST ?? '127.0.0.1' });
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
