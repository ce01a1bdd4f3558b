/**
 * One delivery attempt: a POST behind the SSRF guard. The host is resolved once, here; the
 * addresses that pass the guard are handed to the socket through its `lookup` hook, so the
 * connection goes to an address that was checked and a second resolution cannot swap in another
 * (DNS rebinding). TLS still verifies the certificate against the host name of the URL. No
 * redirect is followed (a 3xx is a failed attempt like any other non-2xx), the whole attempt has
 * one deadline, and at most `maxResponseBytes` of the answer are read.
 */
import { lookup as systemLookup } from 'node:dns/promises';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { hostOf, isPublicAddress } from './address-guard.ts';
import { checkCallbackUrl } from './callback-url.ts';
import { deadlineSignal, whenAborted } from '@svc/jobs';

export const DEFAULT_ATTEMPT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024;
const USER_AGENT = 'email-qr-service-callbacks/1';

export type ResolveHost = (host: string) => Promise<string[]>;

/** The system resolver (getaddrinfo: /etc/hosts, then DNS), every address it returns. */
export const resolveWithSystem: ResolveHost = async (host) => (await systemLookup(host, { all: true })).map((entry) => entry.address);

export interface DeliveryRequest {
  url: string;
  body: string;
  /** Extra headers (signature, event id); content type, length and user agent are set here. */
  headers: Record<string, string>;
}

export interface DeliveryOptions {
  /** Allows http:// and non-public addresses (test rigs, private deployments). */
  allowPrivate: boolean;
  timeoutMs?: number;
  maxResponseBytes?: number;
  resolveHost?: ResolveHost;
  /** Extra trusted certificate authorities (a private CA; tests). */
  ca?: string;
  /** Aborts the attempt (shutdown). */
  signal?: AbortSignal;
}

export type DeliveryOutcome =
  | { kind: 'delivered'; status: number }
  /** Worth retrying: no answer, a network error, or a non-2xx status. */
  | { kind: 'failed'; reason: string; status?: number }
  /** Refused by the guard: nothing was sent, and retrying would not change that. */
  | { kind: 'refused'; reason: string };

export async function deliver(request: DeliveryRequest, options: DeliveryOptions): Promise<DeliveryOutcome> {
  const check = checkCallbackUrl(request.url, options.allowPrivate);
  if (!check.ok) return { kind: 'refused', reason: check.message };
  const timeoutMs = options.timeoutMs ?? DEFAULT_ATTEMPT_TIMEOUT_MS;
  const { signal, release } = deadlineSignal(Date.now() + timeoutMs, options.signal === undefined ? [] : [options.signal]);
  const describe = (error: unknown) =>
    !signal.aborted
      ? errorCode(error)
      : signal.reason instanceof DOMException && signal.reason.name === 'TimeoutError'
        ? `no answer within ${timeoutMs} ms`
        : 'cancelled';
  try {
    const url = new URL(request.url);
    const { host, literal } = hostOf(url);
    let addresses: string[];
    const aborted = whenAborted(signal, () => new Error('aborted', { cause: signal.reason }));
    try {
      addresses = literal ? [host] : await Promise.race([(options.resolveHost ?? resolveWithSystem)(host), aborted.promise]);
    } catch (error) {
      return { kind: 'failed', reason: `cannot resolve ${host}: ${describe(error)}` };
    } finally {
      aborted.dispose();
    }
    const vetted = options.allowPrivate ? addresses : addresses.filter(isPublicAddress);
    if (vetted.length === 0) return { kind: 'refused', reason: `${host} resolves to no public address` };

    return await post(
      url,
      host,
      vetted,
      request,
      { ...options, signal, maxResponseBytes: options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES },
      describe,
    );
  } finally {
    release();
  }
}

/** A `lookup` for the socket that answers with the vetted addresses, whatever name it is asked. */
function pinnedLookup(addresses: string[]) {
  const entries: LookupAddress[] = addresses.map((address) => ({ address, family: isIP(address) }));
  return (
    _hostname: string,
    options: LookupOptions,
    callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    const first = entries[0]!;
    if (options.all === true) callback(null, entries);
    else callback(null, first.address, first.family);
  };
}

function post(
  url: URL,
  host: string,
  addresses: string[],
  request: DeliveryRequest,
  options: DeliveryOptions & { signal: AbortSignal; maxResponseBytes: number },
  describe: (error: unknown) => string,
): Promise<DeliveryOutcome> {
  const body = Buffer.from(request.body, 'utf8');
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const outgoing = send({
      protocol: url.protocol,
      hostname: host,
      port: url.port === '' ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method: 'POST',
      headers: {
        ...request.headers,
        'content-type': 'application/json',
        'content-length': String(body.length),
        'user-agent': USER_AGENT,
      },
      // A fresh connection per attempt: a pooled socket would skip the check above.
      agent: false,
      lookup: pinnedLookup(addresses),
      signal: options.signal,
      ...(options.ca === undefined ? {} : { ca: options.ca }),
    });
    let status: number | undefined;
    let settled = false;
    const settle = (error?: unknown) => {
      if (settled) return;
      settled = true;
      outgoing.destroy();
      if (status === undefined) resolve({ kind: 'failed', reason: describe(error) });
      else if (status >= 200 && status < 300) resolve({ kind: 'delivered', status });
      else resolve({ kind: 'failed', reason: `HTTP ${status}`, status });
    };
    outgoing.on('response', (response: IncomingMessage) => {
      status = response.statusCode ?? 0;
      // The status decides; the body is read only so that the receiver sees a clean close, and
      // never past the bound.
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read >= options.maxResponseBytes) settle();
      });
      response.on('end', () => settle());
      response.on('error', settle);
      response.on('close', () => settle());
    });
    outgoing.on('error', settle);
    outgoing.end(body);
  });
}

function errorCode(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  return 'code' in error && typeof error.code === 'string' ? error.code : error.message;
}
