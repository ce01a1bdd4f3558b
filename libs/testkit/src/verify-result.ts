import type { VerifyResult } from '@svc/contracts';

/** A complete verify result for tests: an accepted mailbox unless `overrides` say otherwise. */
export function verifyResult(email: string, overrides: Partial<Omit<VerifyResult, 'email'>> = {}): VerifyResult {
  return {
    email,
    score: 95,
    verdict: 'deliverable',
    reason: 'accepted_email',
    checks: {
      syntax: true,
      domainExists: true,
      mx: ['mx.x.test'],
      smtp: 'accepted',
      catchAll: false,
      disposable: false,
      role: false,
      free: false,
      provider: null,
    },
    ...overrides,
  };
}
