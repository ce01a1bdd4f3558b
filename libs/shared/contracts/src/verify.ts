/**
 * Email verification's contract (docs/api.md, "Verification results"): the request shapes the gateway
 * validates, the job that crosses to the verify-worker, and the result model.
 */
import { z } from 'zod';
import type { JobKind } from './job-kind.ts';
import { MAX_BATCH } from './list-rules.ts';

export const VERDICTS = ['deliverable', 'risky', 'undeliverable'] as const;
export type Verdict = (typeof VERDICTS)[number];

export const REASONS = [
  'accepted_email',
  'rejected_email',
  'invalid_syntax',
  'invalid_domain',
  'accept_all',
  'disposable',
  'role_account',
  'mailbox_full',
  'mailbox_disabled',
  'greylisted',
  'timeout',
  'no_connect',
  'smtp_blocked',
  'dns_unavailable',
  'smtp_unavailable',
  'throttled',
  'unexpected_error',
  'known_bounce',
  'known_delivery',
  'complainer',
] as const;
export type Reason = (typeof REASONS)[number];

/** Reasons that come from what the key reported of its sends (docs/feedback.md), never from a probe. */
export const FEEDBACK_REASONS: readonly Reason[] = ['known_bounce', 'known_delivery', 'complainer'];

export const historyCheckSchema = z
  .object({
    bounces: z.number().int().min(0).describe('Hard bounces reported for the address.'),
    deliveries: z.number().int().min(0).describe('Deliveries reported for the address.'),
    complaints: z.number().int().min(0).describe('Complaints reported for the address.'),
    lastEventAt: z.string().describe('When the latest reported event happened (ISO 8601 UTC).'),
  })
  .strict();

export const checksSchema = z
  .object({
    syntax: z.boolean().describe('The address is well-formed (RFC 5321/5322 as mail servers accept it).'),
    domainExists: z.boolean().nullable().describe('The domain exists in DNS; null when not looked up (bad syntax) or DNS could not tell.'),
    mx: z
      .array(z.string())
      .nullable()
      .describe(
        'Mail servers of the domain by preference (the domain itself for an implicit MX); null when not looked up or DNS could not tell.',
      ),
    smtp: z
      .enum(['accepted', 'rejected', 'unknown'])
      .nullable()
      .describe('What the mail server said of this mailbox; null when no mail server was asked.'),
    catchAll: z.boolean().nullable().describe('The domain accepts any local part; null when not tested or not learnt.'),
    disposable: z.boolean().nullable().describe('The domain is a known disposable-address provider; null when not checked (bad syntax).'),
    role: z
      .boolean()
      .nullable()
      .describe('The local part is a role (postmaster, info, sales, ...), not a person; null when not checked (bad syntax).'),
    free: z.boolean().nullable().describe('The domain is a free mailbox provider; null when not checked (bad syntax).'),
    provider: z
      .string()
      .nullable()
      .describe(
        'The mailbox provider or mail gateway behind the MX hosts (`google`, `microsoft`, `yahoo`, `proofpoint`, ...); null when unknown or when no MX was learnt.',
      ),
    history: historyCheckSchema
      .nullable()
      .optional()
      .describe("What the key reported of this address's sends (docs/feedback.md); null when nothing was reported."),
  })
  .strict();
export type Checks = z.infer<typeof checksSchema>;

export const verifyResultSchema = z
  .object({
    email: z.string().describe('The address exactly as submitted.'),
    score: z.number().int().min(0).max(100).describe('0..100; higher is more deliverable.'),
    verdict: z
      .enum(VERDICTS)
      .describe('`undeliverable` only on proof, `deliverable` only on an accepted mailbox, anything uncertain `risky`.'),
    reason: z.enum(REASONS).describe('The one reason that decided the verdict.'),
    checks: checksSchema,
    probability: z
      .number()
      .min(0)
      .max(1)
      .optional()
      .describe(
        "On `accept_all` results: the estimated chance (two decimals) that the address receives mail, from the key's reported sends to that domain (docs/feedback.md).",
      ),
    didYouMean: z.string().optional().describe('Likely intended address when a typo is detected.'),
  })
  .strict();
export type VerifyResult = z.infer<typeof verifyResultSchema>;

const tally = (what: string) => z.number().int().min(0).describe(what);

export const summarySchema = z
  .object({
    deliverable: tally('Results with verdict `deliverable`.'),
    risky: tally('Results with verdict `risky`.'),
    undeliverable: tally('Results with verdict `undeliverable`.'),
  })
  .strict()
  .describe('Results per verdict; the three add up to `count`.');

export const batchResponseSchema = z
  .object({
    count: tally('Entries submitted, and results returned.'),
    results: z.array(verifyResultSchema).describe('One result per submitted entry, in input order.'),
    summary: summarySchema,
  })
  .strict();
export type BatchResponse = z.infer<typeof batchResponseSchema>;

/** Request body of the batch route and the batch tool (its error mapping lives with the route). */
export const batchRequestSchema = z
  .object({
    emails: z.array(z.string()).min(1).max(MAX_BATCH).describe(`Addresses to verify, 1 to ${MAX_BATCH}; results come back in this order.`),
  })
  .strict();

export const singleVerifyQuerySchema = z.object({ email: z.string().min(1).describe('The address to verify.') }).strict();

export const verifyJobPayloadSchema = z.object({
  emails: z.array(z.string()).min(1).max(MAX_BATCH),
  /** The calling key's id: the verifier answers from what that key reported (docs/feedback.md). */
  keyId: z.string().max(64).optional(),
});
export type VerifyJobPayload = z.infer<typeof verifyJobPayloadSchema>;

/**
 * One result as the verify job answers it: everything but the address. Job results travel
 * through Redis (BullMQ's completion events stay in its event stream after the job is gone), so
 * they carry no address: a typo suggestion is its domain only, and the gateway puts the entries
 * it submitted back (`publicResults`).
 */
export const verifyJobEntrySchema = verifyResultSchema
  .omit({ email: true, didYouMean: true })
  .extend({ didYouMeanDomain: z.string().optional().describe('The likely intended domain when a typo is detected.') })
  .strict();
export type VerifyJobEntry = z.infer<typeof verifyJobEntrySchema>;
export const verifyJobResultSchema = z.object({ results: z.array(verifyJobEntrySchema) });
export type VerifyJobResult = z.infer<typeof verifyJobResultSchema>;

export const VERIFY_JOB: JobKind<VerifyJobPayload, VerifyJobResult> = {
  name: 'verify',
  payload: verifyJobPayloadSchema,
  result: verifyJobResultSchema,
};

/** A verifier's result as the job answers it: without its address, the suggestion as a domain. */
export function toJobEntry(result: VerifyResult): VerifyJobEntry {
  const { email: _email, didYouMean, ...rest } = result;
  return didYouMean === undefined ? rest : { ...rest, didYouMeanDomain: didYouMean.slice(didYouMean.lastIndexOf('@') + 1) };
}

/** The address a suggestion stands for: the entry's own local part (as the verifier reads it) at the suggested domain. */
function suggestedAddress(entry: string, domain: string): string {
  const trimmed = entry.replace(/^[ \t]+|[ \t]+$/g, '');
  return `${trimmed.slice(0, trimmed.lastIndexOf('@'))}@${domain}`;
}

/** The public results of a verify job: each entry exactly as submitted, in input order, with its result. */
export function publicResults(emails: readonly string[], job: VerifyJobResult): VerifyResult[] {
  if (job.results.length !== emails.length)
    throw new Error(`verify job answered ${job.results.length} results for ${emails.length} entries`);
  return job.results.map(({ didYouMeanDomain, ...rest }, index) => {
    const email = emails[index]!;
    return didYouMeanDomain === undefined ? { email, ...rest } : { email, ...rest, didYouMean: suggestedAddress(email, didYouMeanDomain) };
  });
}

/** The public result of a single-address verify job. */
export function publicResult(email: string, job: VerifyJobResult): VerifyResult {
  const [result] = publicResults([email], job);
  if (result === undefined) throw new Error('verify job answered no result');
  return result;
}

export function buildBatchResponse(results: VerifyResult[]): BatchResponse {
  const summary = { deliverable: 0, risky: 0, undeliverable: 0 };
  for (const result of results) summary[result.verdict] += 1;
  return { count: results.length, results, summary };
}
