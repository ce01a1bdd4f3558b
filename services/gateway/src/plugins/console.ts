/**
 * The web console at /app: the static files `npm run build` writes into clients/console/dist
 * (scripts/console-build.ts), served without a key, each response under a strict
 * Content-Security-Policy. `/` and `/app` redirect to `/app/`. The pages call the public API
 * with the key the user types; nothing here reads a key.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import fastifyStatic from '@fastify/static';
import { ApiError } from '@svc/contracts';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { sendError } from '../errors/api-errors.ts';

/**
 * Scripts and styles from this origin only (Vite writes no inline script), the API on the same
 * origin, pictures from here or made in the page (the QR preview is a blob: URL, the PNG a canvas),
 * and no framing (clickjacking of the key field).
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export interface ConsoleOptions {
  /** The built files; by default clients/console/dist of the installed @svc/console. */
  dir?: string;
}

export function defaultConsoleDir(): string {
  return join(dirname(createRequire(import.meta.url).resolve('@svc/console/package.json')), 'dist');
}

/**
 * The interactive docs (/docs), where people type their key too: Swagger UI's own files from
 * this origin (no inline script: its initializer is a file), its calls to this origin, the QR
 * answers it draws as `data:` images, and no framing. Swagger UI inserts one inline style
 * element of its own, allowed by its hash (read from Chromium's report of it).
 */
export const DOCS_CSP = CONSOLE_CSP.replace("img-src 'self' data: blob:", "img-src 'self' data:")
  .replace("font-src 'self'", "font-src 'self' data:")
  .replace("style-src 'self'", "style-src 'self' 'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='");

/** The headers of every page where a key is typed (the console, /docs). */
export function securePage(reply: FastifyReply, csp: string = CONSOLE_CSP): void {
  reply.header('Content-Security-Policy', csp);
  reply.header('X-Content-Type-Options', 'nosniff');
  reply.header('Referrer-Policy', 'no-referrer');
  reply.header('Cross-Origin-Opener-Policy', 'same-origin');
}

export default function consoleRoutes(app: FastifyInstance, options: ConsoleOptions, done: (error?: Error) => void): void {
  const dir = options.dir ?? defaultConsoleDir();
  const hidden = { schema: { hide: true } };
  app.get('/', hidden, (_request, reply) => reply.redirect('/app/', 302));
  app.get('/app', hidden, (_request, reply) => reply.redirect('/app/', 301));
  if (!existsSync(join(dir, 'index.html'))) {
    // A gateway started from a clone that was never built: say how to get the pages.
    app.get('/app/*', hidden, (_request, reply) =>
      sendError(reply, new ApiError('not_found', 'The web console is not built here: run `npm run build` (or `npm start`).')),
    );
    done();
    return;
  }
  app.register(fastifyStatic, {
    root: dir,
    prefix: '/app/',
    schemaHide: true,
    cacheControl: false,
    // File names under assets/ carry a content hash; index.html must be asked for again.
    setHeaders: (response, path) => {
      response.setHeader('Cache-Control', path.includes('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
  });
  app.addHook('onSend', async (request, reply, payload) => {
    if (request.url.startsWith('/app')) securePage(reply);
    return payload;
  });
  done();
}
