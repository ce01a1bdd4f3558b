/**
 * Wifi network-join codes: the `WIFI:` payload, its escaping and the password rules per security
 * type.
 */
import { z } from 'zod';
import { SECURITY, SSID_PROBLEM, buildWifiPayload, passwordProblem, ssidFits, type Security } from './rules.ts';

export { SECURITY, buildWifiPayload, escapeWifi, type Security } from './rules.ts';

export const ssid = z
  .string()
  .refine(ssidFits, SSID_PROBLEM)
  .describe('Network name (SSID), 1 to 32 bytes of UTF-8.')
  // The byte rule cannot be said in JSON Schema; 32 characters is the bound it implies.
  .meta({ minLength: 1, maxLength: 32, examples: ['Home'] });
export const password = z
  .string()
  .optional()
  .describe(
    'Network password; required unless security=nopass (WPA: 8-63 characters or 64 hex digits; WEP: 5 or 13 characters or 10 or 26 hex digits).',
  )
  .meta({ maxLength: 64, examples: ['correct-horse'] });

/**
 * Any case is accepted and written in the canonical spelling, so JSON Schema shows the canonical
 * values. `WPA2` is `WPA`: the WIFI: payload names one WPA type, which readers use for every WPA
 * generation, and people naturally type the one their router shows.
 */
const SECURITY_BY_LOWER_CASE = new Map<string, Security>([
  ...Object.values(SECURITY).map((name) => [name.toLowerCase(), name] as const),
  ['wpa2', 'WPA'],
]);
const canonicalSecurity = (value: unknown): unknown =>
  typeof value === 'string' ? (SECURITY_BY_LOWER_CASE.get(value.toLowerCase()) ?? value) : value;

export const security = z
  .preprocess(canonicalSecurity, z.enum(Object.values(SECURITY), { error: 'must be WPA (WPA2 is accepted as WPA), WEP or nopass' }))
  .prefault('WPA')
  .describe(
    'WPA (default), WEP or nopass; case-insensitive. WPA2 is accepted and written as WPA, the type readers use for every WPA generation.',
  );

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
