/**
 * Real providers' replies (fixtures/provider-replies.ts), read end to end by the pure pieces: the
 * bytes through the reply parser, the reply table, the evidence rule in each kind of session, and
 * the verdict. Each reply must read as a careful verifier would, except where this file says why
 * the product decides otherwise.
 */
import { describe, expect, it } from 'vitest';
import { classifySessionReply, decide, readRcptReply, weighEvidence, type SmtpOutcome, type SmtpReply } from '../../src/checks/index.ts';
import { ReplyParser, publicReply } from '../../src/smtp/reply-parser.ts';
import { CORPUS, type Case } from './fixtures/provider-replies.ts';

type Scenario = 'alone' | 'alike' | 'known' | 'other' | 'catchall';
const SCENARIOS: Scenario[] = ['alone', 'alike', 'known', 'other', 'catchall'];

const ACCEPTED: SmtpReply = { code: 250, enhanced: '2.1.5', text: 'OK' };
const UNKNOWN_CONTROL: SmtpReply = {
  code: 550,
  enhanced: '5.1.1',
  text: 'Recipient address rejected: User unknown in local recipient table',
};

/**
 * Where the product reads a reply otherwise than the corpus expects, and why. Each entry is
 * checked to still differ, so the list stays true.
 */
const DECIDED_OTHERWISE: Record<string, { scenarios: Scenario[]; why: string }> = {
  'yahoo-552-mailbox-not-found': {
    scenarios: ['alone', 'alike'],
    why: 'a bare 552 is "storage exceeded" (RFC 5321) before any words are read; this legacy wording is not confirmed',
  },
  'gmx-policy-reject': {
    scenarios: ['alone'],
    why: '"mailbox unavailable" reads as an unknown mailbox; alike (a reputation block hits every recipient) it is smtp_blocked',
  },
  'yandex-5.7.1-no-such-user': {
    scenarios: ['alone', 'alike'],
    why: 'codes first: 5.7.x is a refusal of the client unless the session shows the server accepts the prober',
  },
  'mimecast-security-policies': { scenarios: ['alone'], why: '"policy" is read as nothing (hosted mail uses it for unknown recipients)' },
  'postscreen-5.3.2': { scenarios: ['alone'], why: '5.3.x names no cause; alike (every recipient) it is smtp_blocked' },
};

function parse(wire: string): SmtpReply {
  const replies = new ReplyParser().push(Buffer.from(`${wire.split('\n').join('\r\n')}\r\n`, 'utf8'));
  expect(replies).toHaveLength(1);
  return publicReply(replies[0]!);
}

const verdictOf = (smtp: SmtpOutcome, catchAll: boolean | null): string => {
  const decision = decide({ syntaxOk: true, disposable: false, role: false, free: false, dns: 'ok', smtp, catchAll });
  return `${decision.verdict}/${decision.reason}`;
};

/** The verdict for the address `x@d` answered with `reply` in each kind of session; and whether evidence rule 2 decided `alike` on a meaning read from words or nothing. */
function readings(testCase: Case): { verdicts: Record<Scenario, string>; alikeByRule2OnWords: boolean } {
  const reply = parse(testCase.wire);
  if (testCase.stage === 'session' || reply.code === 421) {
    const verdict = verdictOf(classifySessionReply(reply), null);
    return { verdicts: { alone: verdict, alike: verdict, known: verdict, other: verdict, catchall: verdict }, alikeByRule2OnWords: false };
  }
  const session = (control: SmtpReply | undefined, others: Record<string, SmtpReply>) => {
    const found = weighEvidence({ ...(control ? { control } : {}), mailboxes: new Map([['x@d', reply], ...Object.entries(others)]) });
    const finding = found.mailboxes.get('x@d')!;
    return { verdict: verdictOf(finding.class, found.catchAll), by: finding.by };
  };
  const alike = session(reply, { 'y@d': reply });
  const basis = readRcptReply(reply).basis;
  return {
    verdicts: {
      alone: session(undefined, {}).verdict,
      alike: alike.verdict,
      known: session(reply, { 'ann@d': ACCEPTED }).verdict,
      other: session(UNKNOWN_CONTROL, { 'ann@d': ACCEPTED }).verdict,
      catchall: session(ACCEPTED, {}).verdict,
    },
    // Evidence rule 2 (docs/verification.md): a refusal that every recipient gets alike speaks of
    // the client unless it carries an RFC 3463 mailbox status; words alone do not outweigh it.
    alikeByRule2OnWords: alike.by === 'all_refused' && (basis === 'text' || basis === 'none') && testCase.statusInText !== true,
  };
}

const matches = (got: string, want: string): boolean =>
  want.split('|').some((choice) => (choice.endsWith('/*') ? got.startsWith(choice.slice(0, -1)) : got === choice));

/** The corpus's expectation per scenario; `alike` defaults to `alone` unless the mailbox is full or disabled (the control's would not be). */
function expected(testCase: Case): Partial<Record<Scenario, string>> {
  const alone = testCase.expect.alone;
  const alike = alone !== undefined && !/mailbox_(full|disabled)/.test(alone) ? alone : undefined;
  return { alike, ...testCase.expect };
}

describe('real providers’ replies, read end to end', () => {
  it.each(CORPUS.map((testCase) => [testCase.id, testCase] as const))('%s', (id, testCase) => {
    const { verdicts, alikeByRule2OnWords } = readings(testCase);
    const want = expected(testCase);
    const otherwise = DECIDED_OTHERWISE[id]?.scenarios ?? [];
    for (const scenario of SCENARIOS) {
      const wanted = want[scenario];
      if (wanted === undefined || (scenario === 'alike' && alikeByRule2OnWords)) continue;
      const where = `${scenario}: ${JSON.stringify(testCase.wire)}`;
      if (otherwise.includes(scenario)) expect(matches(verdicts[scenario], wanted), `still decided otherwise, ${where}`).toBe(false);
      else expect(verdicts[scenario], where).toSatisfy((got: string) => matches(got, wanted));
    }
  });

  it('covers the providers a list is full of, and every kind of answer', () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(140);
    const sources = new Set(CORPUS.map((testCase) => testCase.src.split(' ')[0]));
    for (const provider of ['Gmail', 'Microsoft', 'Yahoo', 'Postfix', 'Exim', 'Mimecast', 'Proofpoint', 'Barracuda'])
      expect(
        [...sources].some((source) => source?.startsWith(provider)),
        provider,
      ).toBe(true);
  });
});
