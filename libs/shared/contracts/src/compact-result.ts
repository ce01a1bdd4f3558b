/**
 * A verify result as Redis keeps it: a short positional string instead of its JSON (a cached
 * outcome fell from about 300 bytes of JSON to about 60, issue 32; list results are kept the
 * same way). `score|<verdict><reason>|<flags>|<smtp>|<tail JSON>`: verdict and reason as their
 * index in VERDICTS and REASONS (base 36), the six boolean checks as `1`, `0` or `n` (null), the
 * SMTP answer as its first letter or `n`, and what may hold any character (MX hosts from DNS, the
 * provider, a suggestion with its local part) as a JSON array at the end, after the last `|`
 * that any prefix can hold. No address is in it; the reader validates what it decodes.
 */
import { REASONS, VERDICTS, type VerifyResult } from './verify.ts';

/** What is stored: the result without its address; `extra` is a suggestion (its form is the caller's). */
export type CompactInput = Omit<VerifyResult, 'email' | 'didYouMean'> & { extra?: string };

const FLAG_CHECKS = ['syntax', 'domainExists', 'catchAll', 'disposable', 'role', 'free'] as const;
const SMTP = { accepted: 'a', rejected: 'r', unknown: 'u' } as const;

const flag = (value: boolean | null): string => (value === null ? 'n' : value ? '1' : '0');
const unflag = (char: string): boolean | null => (char === 'n' ? null : char === '1');

export function encodeCompactResult(result: CompactInput): string {
  const { checks } = result;
  const kinds = VERDICTS.indexOf(result.verdict).toString(36) + REASONS.indexOf(result.reason).toString(36);
  const flags = FLAG_CHECKS.map((name) => flag(checks[name])).join('');
  const smtp = checks.smtp === null ? 'n' : SMTP[checks.smtp];
  const tail = result.extra === undefined ? [checks.mx, checks.provider] : [checks.mx, checks.provider, result.extra];
  return `${result.score}|${kinds}|${flags}|${smtp}|${JSON.stringify(tail)}`;
}

/**
 * The stored result back as a plain object (score, verdict, reason, checks) and its `extra`, or
 * undefined when `encoded` is not in this layout. Only the layout is undone: the caller validates
 * the object against its schema (what Redis holds is not trusted).
 */
export function decodeCompactResult(encoded: string): { fields: Record<string, unknown>; extra: unknown } | undefined {
  const parts = /^(\d{1,3})\|([0-9a-z])([0-9a-z])\|([01n]{6})\|([arun])\|(\[.*\])$/s.exec(encoded);
  if (parts === null) return undefined;
  const [, score = '', verdict = '', reason = '', flags = '', smtp = '', tail = ''] = parts;
  let parsed: unknown;
  try {
    parsed = JSON.parse(tail);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed) || parsed.length < 2 || parsed.length > 3) return undefined;
  const values = [...flags].map(unflag);
  const checks = {
    syntax: values[0],
    domainExists: values[1],
    mx: parsed[0] as unknown,
    smtp: smtp === 'n' ? null : smtp === 'a' ? 'accepted' : smtp === 'r' ? 'rejected' : 'unknown',
    catchAll: values[2],
    disposable: values[3],
    role: values[4],
    free: values[5],
    provider: parsed[1] as unknown,
  };
  const fields = {
    score: Number(score),
    verdict: VERDICTS[parseInt(verdict, 36)],
    reason: REASONS[parseInt(reason, 36)],
    checks,
  };
  return { fields, extra: parsed[2] as unknown };
}
