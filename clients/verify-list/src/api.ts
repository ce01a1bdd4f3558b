/**
 * The list API over HTTP (Node's fetch), with the waiting a patient client does: `429` and `503`
 * are tried again after their `Retry-After`, a server out of reach after a growing pause (for up
 * to ten minutes in a row), and every wait is said aloud. Any other refusal is an `ApiFailure`
 * in the contract's terms (status, error code, message).
 */
import { createWriteStream } from 'node:fs';
import { openAsBlob } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';

export interface ListObject {
  id: string;
  name: string | null;
  status: string;
  count: number;
  distinct: number;
  processed: number;
  summary: { deliverable: number; risky: number; undeliverable: number };
  costUsd: string;
  error?: string;
  /** CSV uploads: the column the addresses were read from (index from 1; header null without a header row) and the encoding read. */
  column?: { index: number; header: string | null };
  encoding?: string;
  /** While addresses wait for a retry: how many, why, when the next is; while it runs: when it should end. */
  waiting?: number;
  waitingReasons?: Record<string, number>;
  nextRetryAt?: string;
  estimatedCompletionAt?: string;
}

export const ENDED = ['completed', 'cancelled', 'failed'];
const PREFIX = '/v1/email-verify/lists';
/** How long the server may stay out of reach (or answer 503) before the client gives up. */
const GIVE_UP_AFTER_MS = 10 * 60_000;
const BACKOFF_FIRST_MS = 500;
const BACKOFF_MAX_MS = 15_000;
/** A Retry-After longer than this is a server mistake: wait an hour and ask again. */
const RETRY_AFTER_MAX_MS = 3_600_000;

/** A refusal the client does not try again: the API's status, code and message. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly apiMessage: string,
  ) {
    super(`${status} ${code}: ${apiMessage}`);
  }
}

/** The server stayed out of reach, or a create request may or may not have arrived. */
export class Unreachable extends Error {}

/** Milliseconds to wait from a Retry-After header: seconds, or an HTTP date. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (header === null) return undefined;
  const value = header.trim();
  const ms = /^\d+$/.test(value) ? Number(value) * 1000 : Date.parse(value) - now;
  return Number.isFinite(ms) ? Math.min(RETRY_AFTER_MAX_MS, Math.max(0, ms)) : undefined;
}

/** The n-th pause (from 0) after a failure: doubling from 0.5 s to 15 s, each shortened by up to a fifth at random. */
export function backoffMs(attempt: number, random = Math.random): number {
  const full = Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** attempt);
  return Math.round(full * (1 - 0.2 * random()));
}

function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  if ('code' in error && typeof error.code === 'string') return error.code;
  if ('errors' in error && Array.isArray(error.errors)) return errorCode(error.errors[0]);
  return undefined;
}

/** Why fetch failed, in a few words: the system's error code when there is one. */
export function networkProblem(error: unknown): string {
  const cause = error instanceof Error ? error.cause : undefined;
  const deepest = cause instanceof Error ? cause : error;
  return errorCode(cause) ?? errorCode(error) ?? (deepest instanceof Error ? deepest.message : String(deepest));
}

/** Failures before a byte of the request was sent: trying again cannot make a second list. */
const NOTHING_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL']);

async function failureOf(response: Response): Promise<ApiFailure> {
  const text = await response.text().catch(() => '');
  try {
    const body: unknown = JSON.parse(text);
    if (typeof body === 'object' && body !== null && 'error' in body && 'message' in body)
      return new ApiFailure(response.status, String(body.error), String(body.message));
  } catch {
    // Not the API's error shape (a proxy's page, say): say what came back.
  }
  return new ApiFailure(response.status, response.statusText || 'error', text.slice(0, 200) || 'no explanation came with it');
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;

export interface ListApiOptions {
  url: string;
  key: string;
  signal: AbortSignal;
  /** Said to the user while the client waits. */
  notice: (message: string) => void;
}

type Retry = 'idempotent' | 'create';

export class ListApi {
  constructor(private readonly options: ListApiOptions) {}

  private async send(method: string, path: string, init: { body?: () => Promise<Blob>; type?: string }, retry: Retry): Promise<Response> {
    const { url, key, signal, notice } = this.options;
    let attempt = 0;
    let troubleSince: number | undefined;
    const pause = async (why: string, ms: number) => {
      troubleSince ??= Date.now();
      if (Date.now() - troubleSince > GIVE_UP_AFTER_MS)
        throw new Unreachable(`${why}; gave up after ${Math.round(GIVE_UP_AFTER_MS / 60_000)} minutes of trying`);
      notice(`${why}; trying again in ${seconds(ms)}`);
      await sleep(ms, undefined, { signal });
    };
    for (;;) {
      signal.throwIfAborted();
      const headers: Record<string, string> = { authorization: `Bearer ${key}`, accept: 'application/json' };
      if (init.type !== undefined) headers['content-type'] = init.type;
      let response: Response;
      try {
        response = await fetch(`${url}${path}`, { method, headers, body: await init.body?.(), signal });
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        const problem = networkProblem(error);
        if (retry === 'create' && !NOTHING_SENT.has(problem))
          throw new Unreachable(
            `the upload was cut (${problem}): the list may or may not have been created; ` + `GET ${PREFIX} shows your lists, newest first`,
          );
        await pause(`cannot reach ${url} (${problem})`, backoffMs(attempt++));
        continue;
      }
      if (response.status === 429) {
        // Not an outage: the key's own limits, which other lists ending will lift. Wait as long as it takes.
        const failure = await failureOf(response);
        const wait = retryAfterMs(response.headers.get('retry-after')) ?? backoffMs(attempt++);
        notice(`${failure.message}; trying again in ${seconds(wait)}`);
        await sleep(wait, undefined, { signal });
        continue;
      }
      if (response.status === 503 || (retry === 'idempotent' && (response.status === 502 || response.status === 504))) {
        const failure = await failureOf(response);
        await pause(failure.message, retryAfterMs(response.headers.get('retry-after')) ?? backoffMs(attempt++));
        continue;
      }
      if (!response.ok) throw await failureOf(response);
      return response;
    }
  }

  private async json(method: string, path: string, retry: Retry, init: { body?: () => Promise<Blob>; type?: string } = {}) {
    const response = await this.send(method, path, init, retry);
    return (await response.json()) as ListObject;
  }

  /** Uploads a CSV file as it is (read from disk as it is sent). */
  create(
    file: string,
    query: { name?: string | undefined; callbackUrl?: string | undefined; column?: string | undefined },
  ): Promise<ListObject> {
    const params = new URLSearchParams();
    if (query.name !== undefined) params.set('name', query.name);
    if (query.callbackUrl !== undefined) params.set('callbackUrl', query.callbackUrl);
    if (query.column !== undefined) params.set('column', query.column);
    const search = params.size > 0 ? `?${params.toString()}` : '';
    return this.json('POST', `${PREFIX}${search}`, 'create', { body: () => openAsBlob(file), type: 'text/csv' });
  }

  /** Settles a retrying list's waiting addresses now (risky, with the reason they waited for) and completes it. */
  finish(id: string): Promise<ListObject> {
    return this.json('POST', `${PREFIX}/${encodeURIComponent(id)}/finish`, 'idempotent');
  }

  get(id: string): Promise<ListObject> {
    return this.json('GET', `${PREFIX}/${encodeURIComponent(id)}`, 'idempotent');
  }

  /**
   * Streams the CSV results, in the full form (action, flags, provider), into `output`, through `<output>.part` so that a cut download never
   * looks finished; a download cut by the network starts again. Answers what the server said
   * was left out.
   */
  async download(id: string, output: string): Promise<{ status: string; pending: number }> {
    const part = `${output}.part`;
    let attempt = 0;
    for (;;) {
      const response = await this.send('GET', `${PREFIX}/${encodeURIComponent(id)}/results?format=csv&columns=full`, {}, 'idempotent');
      if (response.body === null) throw new ApiFailure(response.status, 'empty', 'the results came without a body');
      try {
        await pipeline(response.body, createWriteStream(part), { signal: this.options.signal });
      } catch (error) {
        await rm(part, { force: true });
        if (this.options.signal.aborted) throw this.options.signal.reason;
        if (attempt >= 5) throw error;
        const ms = backoffMs(attempt++);
        this.options.notice(`the download was cut (${networkProblem(error)}); starting it again in ${seconds(ms)}`);
        await sleep(ms, undefined, { signal: this.options.signal });
        continue;
      }
      await rename(part, output);
      return { status: response.headers.get('x-list-status') ?? 'unknown', pending: Number(response.headers.get('x-list-pending') ?? 0) };
    }
  }
}
