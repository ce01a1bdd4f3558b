/**
 * Email verification's contract (docs/api.md, "Verification results"): the request shapes the gateway
 * validates, the job that crosses to the verify-worker, and the result model.
 */
import { z } from 'zod';
import type { JobKind } from './job-kind.ts';

export const MAX_BATCH = 100;

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
  'unexpected_error',
] as const;
export type Reason = (typeof REASONS)[number];

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

export const verifyJobPayloadSchema = z.object({ emails: z.array(z.string()).min(1).max(MAX_BATCH) });
export type VerifyJobPayload = z.infer<typeof verifyJobPayloadSchema>;
export const verifyJobResultSchema = z.object({ results: z.array(verifyResultSchema) });
export type VerifyJobResult = z.infer<typeof verifyJobResultSchema>;

export const VERIFY_JOB: JobKind<VerifyJobPayload, VerifyJobResult> = {
  name: 'verify',
  payload: verifyJobPayloadSchema,
  result: verifyJobResultSchema,
};

export function buildBatchResponse(results: VerifyResult[]): BatchResponse {
  const summary = { deliverable: 0, risky: 0, undeliverable: 0 };
  for (const result of results) summary[result.verdict] += 1;
  return { count: results.length, results, summary };
}
