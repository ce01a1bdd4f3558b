/**
 * STAND-IN for `@svc/webhooks`, which another branch builds (signed, retried callback delivery).
 * This file declares exactly the interface agreed for it, so the list code compiles and tests can
 * observe what it hands over; when the real package is merged, imports of this module are
 * pointed at `@svc/webhooks` and this file is deleted. It delivers nothing.
 */
import ipaddr from 'ipaddr.js';

export type ListEventType = 'list.completed' | 'list.cancelled' | 'list.failed';

export interface CallbackEvent {
  /** Unique per event, sent as X-Event-Id; receivers deduplicate by it. */
  id: string;
  type: ListEventType;
  /** Public id of the API key that owns the list. */
  keyId: string;
  /** The list's callbackUrl, accepted by checkCallbackUrl at creation. */
  url: string;
  /** The exact JSON body to POST: the list object plus `"event": type`. */
  body: string;
}

/** Durable, retried delivery: enqueue returns once the event is stored (Redis) or queued (memory). */
export interface CallbackDispatcher {
  enqueue(event: CallbackEvent): Promise<void>;
  close(): Promise<void>;
}

const MAX_URL = 2_048;

/**
 * Syntax-level check at list creation: https (http too when private targets are allowed), no
 * credentials, a host that is not a private, loopback or link-local literal, at most 2048 chars.
 */
export function checkCallbackUrl(url: string, allowPrivate: boolean): { ok: true } | { ok: false; message: string } {
  if (url.length > MAX_URL) return { ok: false, message: `callbackUrl must be at most ${MAX_URL} characters.` };
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, message: 'callbackUrl must be an absolute https:// URL.' };
  }
  const schemes = allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(parsed.protocol)) return { ok: false, message: 'callbackUrl must be an https:// URL.' };
  if (parsed.username !== '' || parsed.password !== '') return { ok: false, message: 'callbackUrl must not carry credentials.' };
  if (allowPrivate) return { ok: true };
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return { ok: false, message: 'callbackUrl must be on a public address.' };
  if (ipaddr.isValid(host) && ipaddr.process(host).range() !== 'unicast')
    return { ok: false, message: 'callbackUrl must be on a public address.' };
  return { ok: true };
}

/** Keeps every event it is handed (tests read `events`); delivers nothing. */
export class RecordingCallbackDispatcher implements CallbackDispatcher {
  readonly events: CallbackEvent[] = [];
  enqueue(event: CallbackEvent): Promise<void> {
    this.events.push(event);
    return Promise.resolve();
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}
