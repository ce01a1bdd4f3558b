/**
 * What a results file says (decisions "List verification", "Web console"; docs/lists.md,
 * "Results"): the columns appended to an upload's own, in the default and the full form, the
 * action and flags of a result, the plain sentence of each reason, and how a cell is written so
 * that a spreadsheet never runs it as a formula. No zod: the console bundles this with the other
 * rules (@svc/contracts/rules) for its downloads and its legend.
 */
import type { Checks, Reason, Verdict } from './verify.ts';

/** The contract's four result columns: the default form (a spreadsheet's formulas and an import's mapping rely on them). */
export const RESULT_COLUMNS = ['verdict', 'score', 'reason', 'did_you_mean'] as const;
/** The full form (`?columns=full`): what to do with the row, the checks that were true, the provider, and the probability where feedback gives one. */
export const FULL_RESULT_COLUMNS = [...RESULT_COLUMNS, 'action', 'flags', 'provider', 'probability'] as const;
export const RESULT_FORMS = ['default', 'full'] as const;
export type ResultForm = (typeof RESULT_FORMS)[number];

/** Every results CSV starts with it, so that Excel on Windows reads the UTF-8 (accents) right. */
export const UTF8_BOM = '\ufeff';

export const ACTIONS = { deliverable: 'keep', undeliverable: 'remove', risky: 'review' } as const satisfies Record<Verdict, string>;
export type Action = (typeof ACTIONS)[Verdict];

/** A reason the list results carry beyond the verifier's: an entry never probed (its list was cancelled or failed first). */
export const NOT_VERIFIED = 'not_verified';

/** Reasons a results file can hold: the verifier's, those of later sections of the contract, and `not_verified`. */
export type LegendReason = Reason | 'throttled' | 'known_bounce' | 'known_delivery' | 'complainer' | typeof NOT_VERIFIED;

/** One plain sentence per reason: what it means, and what to do with the address. */
export const REASON_LEGEND: Readonly<Record<LegendReason, string>> = {
  accepted_email: 'The mail server accepted this exact mailbox: keep it.',
  rejected_email: 'The mail server said this mailbox does not exist: remove it.',
  invalid_syntax: 'This is not a well-formed e-mail address (a typo or a stray character): fix it or remove it.',
  invalid_domain: 'The domain does not exist or receives no mail: remove it, or fix the domain if it is a typo.',
  accept_all: 'The domain accepts every address, so this mailbox cannot be confirmed: send with care, or only to engaged contacts.',
  disposable: 'A throwaway address from a disposable-mail service: usually remove it.',
  role_account: 'A shared role mailbox (info@, sales@, noreply@) rather than a person: keep it only if you mean to write to that role.',
  mailbox_full: 'The mailbox exists but is full: try again later or treat it as inactive.',
  mailbox_disabled: 'The mailbox has been disabled: remove it.',
  greylisted: 'The mail server asked to be tried again later and had not answered by the end: verify it again later.',
  timeout: 'The mail server did not answer in time: verify it again later.',
  no_connect: 'None of the domain’s mail servers could be reached: verify it again later, remove it if it stays so.',
  smtp_blocked: 'The mail server refused our check, which says nothing about the mailbox: review it.',
  dns_unavailable: 'The domain’s DNS did not answer, so nothing could be checked: verify it again later.',
  smtp_unavailable: 'Our service could not reach mail servers at the time, so nothing was checked: verify it again later.',
  throttled: 'The provider limits how fast it may be checked and the list ended first: verify it again later.',
  known_bounce: 'Mail you sent to this address bounced: remove it.',
  known_delivery: 'Mail you sent to this address was delivered: keep it.',
  complainer: 'This recipient marked your mail as spam: remove it.',
  unexpected_error: 'Something went wrong on our side while checking it: verify it again.',
  not_verified: 'Not checked: the list was cancelled or failed before this address was verified. Verify it again to know.',
};

/** The sentence of `reason`, or a plain fallback for a code this build does not know yet. */
export const reasonSentence = (reason: string): string =>
  (REASON_LEGEND as Readonly<Record<string, string>>)[reason] ?? `Reason "${reason}".`;

export const VERDICT_LEGEND: Readonly<Record<Verdict, string>> = {
  deliverable: 'A mail server accepted the mailbox: safe to send.',
  risky: 'Could not be confirmed either way: review before sending.',
  undeliverable: 'Proven not to receive mail: remove before sending.',
};

/** The checks a row is flagged with in the full form, in this order, `;`-separated. */
export const FLAGS = ['role', 'free', 'disposable', 'catch_all', 'duplicate'] as const;
export type Flag = (typeof FLAGS)[number];

export function flagsOf(checks: Pick<Checks, 'role' | 'free' | 'disposable' | 'catchAll'>, duplicate: boolean): Flag[] {
  const on: Record<Flag, boolean> = {
    role: checks.role === true,
    free: checks.free === true,
    disposable: checks.disposable === true,
    catch_all: checks.catchAll === true,
    duplicate,
  };
  return FLAGS.filter((flag) => on[flag]);
}

/** A result as the file writes it: the batch result's fields, and the probability "Learning from sends" may add. */
export interface FileResult {
  verdict: Verdict;
  score: number;
  reason: string;
  didYouMean?: string | undefined;
  checks: Pick<Checks, 'role' | 'free' | 'disposable' | 'catchAll' | 'provider'>;
  probability?: number | null | undefined;
}

/**
 * The result cells appended to a row: `result` null for a row without a verdict (no address, or
 * `not_verified`, whose reason is given). `duplicate`: an earlier row of the file had the same
 * address (dedupKey).
 */
export function resultCells(result: FileResult | null, form: ResultForm, duplicate = false, reason = ''): string[] {
  if (result === null) {
    const cells = ['', '', reason, ''];
    return form === 'full' ? [...cells, '', duplicate ? 'duplicate' : '', '', ''] : cells;
  }
  const cells = [result.verdict, String(result.score), result.reason, result.didYouMean ?? ''];
  if (form === 'default') return cells;
  const probability = typeof result.probability === 'number' ? result.probability.toFixed(2) : '';
  return [...cells, ACTIONS[result.verdict], flagsOf(result.checks, duplicate).join(';'), result.checks.provider ?? '', probability];
}

/**
 * A cell as a results file writes it: one that a spreadsheet would read as a formula (starting
 * with `=`, `+`, `-`, `@`, a tab or a carriage return: OWASP's "CSV injection") gets a leading
 * `'`, which spreadsheets show as text and do not run. Every column, the header and the address
 * included; JSON results carry the values as they are.
 */
export function neutraliseCell(cell: string): string {
  return /^[=+\-@\t\r]/.test(cell) ? `'${cell}` : cell;
}

/** A line of a results legend: a verdict or a reason, how many rows had it, their share in percent, and its sentence. */
export interface LegendLine {
  code: string;
  count: number;
  /** Percent of the results with a verdict (or of every row, for `not_verified`), one decimal. */
  percent: number;
  sentence: string;
}

const percentOf = (count: number, total: number): number => (total === 0 ? 0 : Math.round((count * 1000) / total) / 10);

/**
 * The legend of a list's results: each verdict's share, then each reason that occurred, most
 * frequent first, with its count, share and sentence (the console's results page and the legend
 * it puts beside the downloads).
 */
export function resultsLegend(
  verdicts: Readonly<Record<Verdict, number>>,
  reasons: Readonly<Record<string, number>>,
): { verdicts: LegendLine[]; reasons: LegendLine[] } {
  const total = verdicts.deliverable + verdicts.risky + verdicts.undeliverable;
  const all = total + (reasons[NOT_VERIFIED] ?? 0);
  return {
    verdicts: (['deliverable', 'risky', 'undeliverable'] as const).map((verdict) => ({
      code: verdict,
      count: verdicts[verdict],
      percent: percentOf(verdicts[verdict], total),
      sentence: VERDICT_LEGEND[verdict],
    })),
    reasons: Object.entries(reasons)
      .filter(([, count]) => count > 0)
      .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1))
      .map(([code, count]) => ({
        code,
        count,
        percent: percentOf(count, code === NOT_VERIFIED ? all : total),
        sentence: reasonSentence(code),
      })),
  };
}
