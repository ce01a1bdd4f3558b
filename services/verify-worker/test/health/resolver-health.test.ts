import { describe, expect, it } from 'vitest';
import type { MxAnswer } from '../../src/dns/resolver.ts';
import { resolverCheck, untrustedMessage } from '../../src/health/resolver-health.ts';

const answers: Record<string, MxAnswer> = {
  'gmail.com': { kind: 'mx', names: ['gmail-smtp-in.l.google.com'] },
  'outlook.com': { kind: 'nxdomain' },
  'yahoo.com': { kind: 'timeout' },
};
const probe = (domain: string): Promise<MxAnswer> => Promise.resolve(answers[domain] ?? { kind: 'nxdomain' });

describe('resolver check', () => {
  it('is untrusted while fewer than half of the canaries resolve to an MX set, and names what they got', async () => {
    const { healthy, detail } = await resolverCheck(['gmail.com', 'outlook.com', 'yahoo.com'], probe)();
    expect(healthy).toBe(false);
    expect(detail).toEqual({
      resolved: ['gmail.com'],
      failed: [
        { domain: 'outlook.com', answer: 'nxdomain' },
        { domain: 'yahoo.com', answer: 'timeout' },
      ],
      mxHosts: ['gmail-smtp-in.l.google.com'],
    });
    const message = untrustedMessage(['gmail.com', 'outlook.com', 'yahoo.com'], detail);
    expect(message).toContain('VERIFY_DNS_SERVERS');
    expect(message).toContain('dns_unavailable');
  });

  it('is trusted when half or more resolve', async () => {
    expect((await resolverCheck(['gmail.com', 'outlook.com'], probe)()).healthy).toBe(true);
  });
});
