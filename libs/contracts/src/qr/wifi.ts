/**
 * Wifi network-join codes: the `WIFI:` payload, its escaping and the password rules per security
 * type.
 */
import { z } from 'zod';

export const SECURITY = { wpa: 'WPA', wep: 'WEP', nopass: 'nopass' } as const;
export type Security = (typeof SECURITY)[keyof typeof SECURITY];
const HEX = /^[0-9a-fA-F]+$/;

/** `\ ; , : "` are escaped by a backslash in WIFI: payloads. */
export const escapeWifi = (value: string): string => value.replace(/([\\;,:"])/g, '\\$1');

export function buildWifiPayload(ssid: string, security: Security, password: string, hidden: boolean): string {
  // With nopass the P field stays, empty: the shape decisions.md gives, and what phone readers accept.
  return `WIFI:T:${security};S:${escapeWifi(ssid)};P:${escapeWifi(password)};H:${hidden};;`;
}

function passwordProblem(security: Security, password: string | undefined): string | undefined {
  if (security === 'nopass') return password === undefined ? undefined : 'cannot be sent with security=nopass';
  if (password === undefined || password === '') return `is required with security=${security}`;
  const length = [...password].length;
  if (security === 'WPA') {
    return (length >= 8 && length <= 63) || (password.length === 64 && HEX.test(password))
      ? undefined
      : 'must have 8 to 63 characters, or 64 hex digits, with WPA';
  }
  return [5, 13].includes(length) || ([10, 26].includes(password.length) && HEX.test(password))
    ? undefined
    : 'must have 5 or 13 characters, or 10 or 26 hex digits, with WEP';
}

export const ssid = z
  .string()
  .refine((value) => {
    const bytes = Buffer.byteLength(value, 'utf8');
    return bytes >= 1 && bytes <= 32;
  }, 'must have 1 to 32 bytes of UTF-8')
  .describe('Network name (SSID), 1 to 32 bytes of UTF-8.');
export const password = z
  .string()
  .optional()
  .describe(
    'Network password; required unless security=nopass (WPA: 8-63 characters or 64 hex digits; WEP: 5 or 13 characters or 10 or 26 hex digits).',
  );
export const security = z
  .string()
  .transform((value, context) => {
    const found = SECURITY[value.toLowerCase() as keyof typeof SECURITY];
    if (found === undefined) {
      context.addIssue({ code: 'custom', message: 'must be WPA, WEP or nopass' });
      return z.NEVER;
    }
    return found;
  })
  .default('WPA')
  .describe('WPA (default), WEP or nopass; case-insensitive.');

export interface WifiFields {
  ssid: string;
  password?: string | undefined;
  security: Security;
  hidden: boolean;
}

export function wifiRules(value: WifiFields, context: z.RefinementCtx): void {
  const problem = passwordProblem(value.security, value.password);
  if (problem !== undefined) context.addIssue({ code: 'custom', path: ['password'], message: problem });
}

export const wifiData = (value: WifiFields) => buildWifiPayload(value.ssid, value.security, value.password ?? '', value.hidden);
