/**
 * The check a callbackUrl passes when a list is created, and again before every delivery: https
 * (plain http only where private callbacks are allowed, for test rigs and private networks), no
 * credentials in the URL, a bounded length, and no host that is plainly local. Names are resolved
 * only at delivery, where the resolved addresses are checked too (see deliver.ts).
 */
import { isLocalhostName, isPublicAddress, hostOf } from './address-guard.ts';
import { MAX_URL_LENGTH } from './events.ts';

export type CallbackUrlCheck = { ok: true } | { ok: false; message: string };

export function checkCallbackUrl(url: string, allowPrivate: boolean): CallbackUrlCheck {
  if (url.length > MAX_URL_LENGTH) return { ok: false, message: `callbackUrl is longer than ${MAX_URL_LENGTH} characters.` };
  if (!URL.canParse(url)) return { ok: false, message: 'callbackUrl is not an absolute URL.' };
  const parsed = new URL(url);
  const schemes = allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(parsed.protocol))
    return { ok: false, message: `callbackUrl must use ${allowPrivate ? 'https:// or http://' : 'https://'}.` };
  if (parsed.username !== '' || parsed.password !== '') return { ok: false, message: 'callbackUrl must not carry credentials.' };
  if (allowPrivate) return { ok: true };
  const { host, literal } = hostOf(parsed);
  if (literal ? !isPublicAddress(host) : isLocalhostName(host))
    return { ok: false, message: 'callbackUrl must point to a public address (not loopback, private or link-local).' };
  return { ok: true };
}
