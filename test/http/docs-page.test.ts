/**
 * The interactive docs page (/docs) as this product's own (issue 20): its title, mark and
 * favicon instead of Swagger's and fastify's, the Authorize dialog's text (paste the key without
 * `Bearer`) and a note that calls made there are billed, and the QR answer drawn as an image,
 * both the documented example and a live answer. The page's start-up script is run as served,
 * in a VM with the few browser objects it touches, and its SVG plugin is called as Swagger UI
 * calls it.
 */
import vm from 'node:vm';
import { scanSvg } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startServer, type TestServer } from '../support/servers.ts';

interface Element {
  type: unknown;
  props: Record<string, unknown> | null;
  children: unknown[];
}
type Component = (props: Record<string, unknown>) => Element;
interface Plugin {
  wrapComponents: Record<string, (original: unknown) => Component>;
}

const react = {
  createElement: (type: unknown, props: Record<string, unknown> | null, ...children: unknown[]): Element => ({ type, props, children }),
};

/** Every `<img>` in an element tree. */
function images(element: unknown): Array<Record<string, unknown>> {
  if (typeof element !== 'object' || element === null) return [];
  const { type, props, children } = element as Element;
  return [...(type === 'img' && props !== null ? [props] : []), ...children.flatMap(images)];
}
const svgOfImage = (src: unknown): string => decodeURIComponent(String(src).replace(/^data:image\/svg\+xml;charset=utf-8,/, ''));

let server: TestServer;
let document: {
  info: { description: string };
  components: { securitySchemes: Record<string, { description: string }> };
  paths: Record<
    string,
    Record<string, { responses: Record<string, { content: Record<string, { example?: unknown; schema: { xml?: { name?: string } } }> }> }>
  >;
};
beforeAll(async () => {
  server = await startServer('embedded');
  document = (await call(server, '/openapi.json')).json() as typeof document;
});
afterAll(async () => server?.close());

/** Runs the served start-up script with the browser objects it uses; returns the configuration it gives Swagger UI. */
async function swaggerConfig(): Promise<{ plugins: unknown[]; logo: string | undefined }> {
  const script = (await call(server, '/docs/static/swagger-initializer.js')).text;
  let config: { plugins: unknown[] } | undefined;
  const bundle = Object.assign(
    (given: { plugins: unknown[] }) => {
      config = given;
      return { initOAuth: () => undefined };
    },
    { presets: { apis: 'apis' }, plugins: { DownloadUrl: 'DownloadUrl' } },
  );
  const window: { onload?: () => void; location: { href: string } } = { location: { href: `${server.baseUrl}/docs/` } };
  const context = vm.createContext({
    window,
    SwaggerUIBundle: bundle,
    SwaggerUIStandalonePreset: 'standalone',
    document: { querySelector: () => null, body: {}, createElement: () => ({}) },
    MutationObserver: class {
      observe(): void {}
    },
  });
  vm.runInContext(script, context);
  window.onload?.();
  if (config === undefined) throw new Error('the script never started Swagger UI');
  return { plugins: config.plugins, logo: /img\.src = '(data:[^']+)'/.exec(script)?.[1] };
}

describe('the docs page is this product’s', () => {
  it('sends the console’s security headers: a strict CSP that forbids framing, nosniff, no referrer', async () => {
    for (const path of ['/docs', '/docs/', '/docs/static/swagger-initializer.js', '/docs/json']) {
      const response = await call(server, path);
      const csp = response.headers.get('content-security-policy') ?? '';
      expect(csp, path).toContain("frame-ancestors 'none'");
      expect(csp, path).toContain("script-src 'self'");
      expect(csp, path).not.toContain('unsafe-inline');
      expect(response.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(response.headers.get('referrer-policy'), path).toBe('no-referrer');
    }
  });

  it('has the product’s title and favicon, not Swagger’s', async () => {
    const page = await call(server, '/docs/');
    expect(page.status).toBe(200);
    expect(page.text).toContain('<title>Email verification and QR code API: interactive docs</title>');
    expect(page.text).not.toMatch(/<title>Swagger UI<\/title>|favicon-(16|32)x/);
    const icon = /<link rel="icon" type="image\/svg\+xml" href="\.\/(static\/theme\/[^"]+)"/.exec(page.text)?.[1];
    expect((await call(server, `/docs/${icon}`)).text).toMatch(/^<svg /);
    expect((await call(server, '/docs/static/theme/product.css')).text).toContain('.topbar');
  });

  it('shows the product’s mark as the logo, not fastify’s', async () => {
    const { logo } = await swaggerConfig();
    const svg = Buffer.from(String(logo).replace('data:image/svg+xml;base64,', ''), 'base64').toString('utf8');
    expect(svg).toMatch(/^<svg /);
    expect(svg).toContain('Email verification and QR code API');
    expect(svg.toLowerCase()).not.toContain('fastify');
  });

  it('says in the Authorize dialog to paste the key without Bearer, and there and on top that calls are billed', () => {
    const scheme = document.components.securitySchemes.bearerAuth!.description;
    expect(scheme).toContain('paste the key alone, without `Bearer`');
    for (const text of [scheme, document.info.description]) expect(text).toMatch(/billed like any other/);
  });
});

describe('the QR answer is drawn as an image', () => {
  const svgMedia = () => document.paths['/v1/qr/qr']!.get!.responses['200']!.content['image/svg+xml']!;

  it('the example: Swagger UI’s escaped XML example is drawn, and the drawing scans to the example’s data', async () => {
    expect(svgMedia().schema.xml?.name).toBe('svg');
    const example = String(svgMedia().example);
    // What Swagger UI makes of a string example under an XML media type whose root is named `svg`.
    const escaped = example.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
    const shown = `<?xml version="1.0" encoding="UTF-8"?>\n<svg>${escaped}</svg>`;
    const plugin = ((await swaggerConfig()).plugins[1] as (system: unknown) => Plugin)({ React: react });
    const rendered = plugin.wrapComponents.HighlightCode!('Original')({ children: shown });
    const [image] = images(rendered);
    expect(svgOfImage(image?.src)).toBe(example);
    expect(scanSvg(svgOfImage(image?.src))).toBe('hello');
    // The code under it is the SVG itself, not the escaped wrapper.
    expect(JSON.stringify(rendered)).toContain(JSON.stringify(example).slice(1, 60));
    // Any other code is left alone.
    expect(images(plugin.wrapComponents.HighlightCode!('Original')({ children: '{"a":1}' }))).toEqual([]);
  });

  it('a live answer: an SVG response body is drawn above its text, JSON is not', async () => {
    const answer = (await call(server, '/v1/qr/qr?data=from%20the%20docs', { key: server.key })).text;
    const plugin = ((await swaggerConfig()).plugins[1] as (system: unknown) => Plugin)({ React: react });
    const body = plugin.wrapComponents.responseBody!('Original');
    const [image] = images(body({ content: answer, contentType: 'image/svg+xml; charset=utf-8' }));
    expect(scanSvg(svgOfImage(image?.src))).toBe('from the docs');
    expect(images(body({ content: '{"version":1}', contentType: 'application/json' }))).toEqual([]);
  });
});
