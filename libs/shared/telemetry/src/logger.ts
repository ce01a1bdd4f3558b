import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { pino, stdSerializers, type DestinationStream, type Logger as PinoLogger, type LoggerOptions } from 'pino';
import { ERROR_LOG_WINDOW_MS, rateLimitedLog, type RateLimitedLog } from './error-log.ts';

/**
 * Paths that must never reach a log line: credentials in headers, API keys in bodies or
 * arguments, and the addresses of a verify request. Shared by every process so a new log call
 * cannot forget them.
 */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'authorization',
  'apiKey',
  'key',
  '*.apiKey',
  '*.key',
  'email',
  'emails',
  '*.email',
  '*.emails',
  'password',
  '*.password',
];

const CENSOR = '[redacted]';

/** Query parameters whose value is a credential, whatever the route. */
const CREDENTIAL_NAMES =
  'key|api[-_]?key|access[-_]?token|token|auth|authorization|password|passwd|pass|secret|client[-_]?secret|sig|signature';
const CREDENTIAL_PARAM = new RegExp(`^(?:${CREDENTIAL_NAMES})$`, 'i');
/** Routes whose whole query string is personal data (the address to verify). */
const PRIVATE_QUERY_PATHS = ['/v1/email-verify/'];
const API_KEY = /sk_[A-Za-z0-9]{8,}/g;
const EMAIL = /[^\s<>"'@,;:()[\]\\]+@([A-Za-z0-9.-]+\.[A-Za-z0-9-]{2,})/g;

/** Hides API keys and the local part of e-mail addresses in free text (error messages, SMTP replies). */
export function scrubText(text: string): string {
  // Most text holds neither: two substring searches instead of two regular expressions (the
  // address pattern alone was 2.6 % of the gateway's CPU under QR load).
  if (!text.includes('@') && !text.includes('sk_')) return text;
  return text.replace(API_KEY, CENSOR).replace(EMAIL, `${CENSOR}@$1`);
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

const mayBeEncoded = (text: string): boolean => text.includes('%') || text.includes('+');

/**
 * Escapes of characters that take no part in an address or a key (`: / ? # [ ] ! $ & ' ( ) * + ,
 * ; = space " < > %`): what `encodeURIComponent` makes of URL punctuation.
 */
const SAFE_ESCAPE = '3A|2F|3F|23|5B|5D|21|24|26|27|28|29|2A|2B|2C|3B|3D|20|22|3C|3E|25';
/**
 * Whether raw query text could decode to an address or a key: it holds `@`, `sk_` or a percent
 * escape of another character. Every other value is logged as it came, without being decoded
 * (decoding each value of each logged URL was most of the access line's cost).
 */
const MAY_HIDE_SECRET = new RegExp(`@|sk_|%(?!${SAFE_ESCAPE})`, 'i');
/** A parameter whose name is a credential, somewhere in a raw query. */
const CREDENTIAL_PARAM_IN_QUERY = new RegExp(`(?:^|&)(?:${CREDENTIAL_NAMES})(?:[=&]|$)`, 'i');

/**
 * Parameters whose value is content rather than a credential, yet may hold one: the QR `data`
 * (an `otpauth://` secret, a private link). Logged as their length and a short hash, which
 * still tells two requests for the same code apart from two for different ones.
 */
const CONTENT_PARAM = /^data$/i;
const CONTENT_PARAM_IN_QUERY = /(?:^|&)data=/i;

/** What a log line says of a content value: `[redacted:<characters>c:<12 hex of its SHA-256>]`. */
export function contentSummary(value: string): string {
  return `[redacted:${[...value].length}c:${createHash('sha256').update(value).digest('hex').slice(0, 12)}]`;
}

function redactParameter(pair: string): string {
  const equals = pair.indexOf('=');
  if (equals < 0) return scrubText(pair);
  const name = pair.slice(0, equals);
  const value = pair.slice(equals + 1);
  if (CONTENT_PARAM.test(mayBeEncoded(name) ? decoded(name) : name)) return `${name}=${contentSummary(decoded(value))}`;
  if (CREDENTIAL_PARAM.test(mayBeEncoded(name) ? decoded(name) : name)) return `${name}=${CENSOR}`;
  if (!MAY_HIDE_SECRET.test(value)) return pair;
  const plain = decoded(value);
  return scrubText(plain) === plain ? pair : `${name}=${encodeURIComponent(scrubText(plain))}`;
}

/**
 * A request URL as it may be logged: the query of the verify routes removed whole, and elsewhere
 * the value of every credential-like parameter, and any key or address inside a value, redacted;
 * the QR `data` as its length and a short hash.
 * A query with nothing to hide (the usual one) is checked by two regular expressions and kept.
 */
export function redactUrl(url: string): string {
  const mark = url.indexOf('?');
  if (mark < 0) return scrubText(url);
  const path = scrubText(url.slice(0, mark));
  if (PRIVATE_QUERY_PATHS.some((prefix) => path.startsWith(prefix))) return `${path}?${CENSOR}`;
  const query = url.slice(mark + 1);
  if (!MAY_HIDE_SECRET.test(query) && !CREDENTIAL_PARAM_IN_QUERY.test(query) && !CONTENT_PARAM_IN_QUERY.test(query))
    return `${path}?${query}`;
  return `${path}?${query.split('&').map(redactParameter).join('&')}`;
}

interface LoggedRequest {
  method?: string;
  url?: string;
  ip?: string;
  socket?: { remotePort?: number } | null;
}

/** What a request contributes to a log line (fastify's fields, with the URL redacted). */
function serializeRequest(request: LoggedRequest): Record<string, unknown> {
  return {
    method: request.method,
    url: request.url === undefined ? undefined : redactUrl(request.url),
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}

function serializeError(error: Error): Record<string, unknown> {
  const serialized = stdSerializers.err(error) as unknown as Record<string, unknown>;
  for (const field of ['message', 'stack']) {
    const value = serialized[field];
    if (typeof value === 'string') serialized[field] = scrubText(value);
  }
  return serialized;
}

/** How long an access line may wait in its buffer before it is written. */
export const ACCESS_LOG_FLUSH_MS = 200;
/** Characters of access lines gathered before they are written in one system call. */
export const ACCESS_LOG_BATCH_CHARS = 4096;

/** The fields of one access line, all built by the gateway (the URL already redacted). */
export interface AccessLine {
  reqId: string;
  method: string;
  url: string;
  statusCode: number;
  responseTime: number;
}

export interface AccessLog {
  /**
   * Writes one access line at level info (nothing below it): the line pino would write for
   * `logger.info(line, message)`, built here as one string. pino's generic path (level and mixin
   * checks, key iteration, a quoting check per value) was about 4 % of the gateway's CPU under
   * `npm run bench:qr`'s load; these five fields need none of it.
   */
  write(line: AccessLine, message: string): void;
  /** Writes what is buffered and stops the flush timer (the gateway's close). */
  close(): void;
}

/**
 * The gateway's access log: one line per request, whose fields the gateway builds itself (the URL
 * through `redactUrl`, no headers, no body), so it goes without pino's redaction paths and message
 * hook. Lines are gathered here and written by about ACCESS_LOG_BATCH_CHARS, at least every
 * ACCESS_LOG_FLUSH_MS, and on close: at QR load an access line cost about 8 % of the gateway's
 * CPU (LOG_LEVEL info against warn, built embedded gateway), of which the system call per line
 * was a part. They are gathered here rather than in the destination's own buffer (sonic-boom's
 * `minLength`), which measures the byte length of its whole pending text on every line: that
 * flattened a growing string per request, about 4 KB of garbage each (allocation profile under
 * bench:qr). A process killed with SIGKILL can lose its last ACCESS_LOG_FLUSH_MS of access lines;
 * every other log line is written at once.
 *
 * `destination` (tests) receives each line at once.
 */
export function createAccessLog(level: string, name: string, destination?: DestinationStream): AccessLog {
  const enabled = level !== 'silent' && (pino.levels.values[level] ?? 0) <= pino.levels.values.info!;
  // pino's order: level, time, its bindings (pid, hostname, name), the fields, the message.
  const bindings = `,"pid":${process.pid},"hostname":${JSON.stringify(hostname())},"name":${JSON.stringify(name)}`;
  const format = (line: AccessLine, message: string) =>
    `{"level":30,"time":${Date.now()}${bindings},"reqId":${JSON.stringify(line.reqId)},"method":${JSON.stringify(line.method)}` +
    `,"url":${JSON.stringify(line.url)},"statusCode":${line.statusCode},"responseTime":${line.responseTime},"msg":${JSON.stringify(message)}}\n`;
  if (destination !== undefined) {
    return { write: (line, message) => void (enabled && destination.write(format(line, message))), close: () => undefined };
  }
  const out = pino.destination({ dest: 1, sync: true });
  let pending = '';
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    if (pending === '') return;
    const text = pending;
    pending = '';
    out.write(text);
  };
  const flushLater = () => {
    timer = undefined;
    flush();
  };
  return {
    write: (line, message) => {
      if (!enabled) return;
      pending += format(line, message);
      if (pending.length >= ACCESS_LOG_BATCH_CHARS) flush();
      else timer ??= setTimeout(flushLater, ACCESS_LOG_FLUSH_MS).unref();
    },
    close: () => {
      clearTimeout(timer);
      timer = undefined;
      flush();
      out.flushSync();
      out.destroy();
    },
  };
}

export function loggerOptions(level: string, name: string): LoggerOptions {
  return {
    level,
    name,
    redact: { paths: REDACT_PATHS, censor: CENSOR },
    serializers: { req: serializeRequest, err: serializeError },
    hooks: {
      // The message text itself may quote an address or a key (a reply, an error message).
      logMethod(args, method) {
        const scrubbed = args.map((arg: unknown) => (typeof arg === 'string' ? scrubText(arg) : arg));
        method.apply(this, scrubbed as Parameters<typeof method>);
      },
    },
  };
}

/**
 * A process's logger: pino's, carrying the process's error log. The components handed the logger
 * write their repeated errors (a Redis outage, a queue that cannot reach it) to its `errorLog`, so
 * they share one set of windows: two connections failing the same way still write within the
 * contract's bound (error-log.ts). Made once by each composition root and passed down.
 */
export type Logger = PinoLogger & { readonly errorLog: RateLimitedLog };

/**
 * A logger to stdout, or to `destination` (tests read what a component logs), whose error log
 * writes each kind at most once per `errorWindowMs`: the contract's 10 s, or LOG_ERROR_WINDOW_MS
 * as a composition root passes it.
 */
export function createLogger(level: string, name: string, destination?: DestinationStream, errorWindowMs = ERROR_LOG_WINDOW_MS): Logger {
  const logger = destination === undefined ? pino(loggerOptions(level, name)) : pino(loggerOptions(level, name), destination);
  return withErrorLog(logger, errorWindowMs);
}

/** Gives a pino logger made elsewhere (a test's, with options of its own) an error log of windows of `windowMs`. */
export function withErrorLog(logger: PinoLogger, windowMs = ERROR_LOG_WINDOW_MS): Logger {
  return Object.assign(logger, { errorLog: rateLimitedLog(logger, windowMs) });
}
