/**
 * What the results page reads from a list's full-form results file, beyond the verdict counts
 * the list object gives: the reasons behind each verdict, and the `probability` of its catch-all
 * addresses (decisions, "Learning from sends": every `accept_all` result carries one, two
 * decimals; the full form writes it in its `probability` column, empty for other results).
 * Pure: the page draws what these return.
 */
import { cutResults } from './csv.ts';

export const VERDICT_NAMES = ['deliverable', 'risky', 'undeliverable'] as const;
type VerdictName = (typeof VERDICT_NAMES)[number];

/** Each verdict's reasons with their counts, most frequent first (rows without a verdict, never verified, are left out). */
export function reasonsByVerdict(header: string[], rows: string[][]): Record<VerdictName, Array<[string, number]>> {
  const verdictAt = header.lastIndexOf('verdict');
  const reasonAt = header.lastIndexOf('reason');
  const counts = new Map<string, Map<string, number>>(VERDICT_NAMES.map((verdict) => [verdict, new Map()]));
  if (verdictAt >= 0 && reasonAt >= 0)
    for (const row of rows) {
      const reasons = counts.get(row[verdictAt] ?? '');
      const reason = row[reasonAt] ?? '';
      if (reasons !== undefined && reason !== '') reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
    }
  const sorted = (verdict: VerdictName) => [...(counts.get(verdict) ?? [])].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return { deliverable: sorted('deliverable'), risky: sorted('risky'), undeliverable: sorted('undeliverable') };
}

/** A probability cell as a number, or null for an empty or unreadable one (a result without a probability). */
function probabilityOf(cell: string | undefined): number | null {
  if (cell === undefined || cell.trim() === '') return null;
  const value = Number(cell);
  return Number.isFinite(value) && value >= 0 && value <= 1 ? value : null;
}

/** The probabilities of the file's catch-all addresses (the rows whose `probability` is filled). */
export function catchAllProbabilities(header: string[], rows: string[][]): number[] {
  const at = header.lastIndexOf('probability');
  if (at < 0) return [];
  return rows.map((row) => probabilityOf(row[at])).filter((value) => value !== null);
}

export const BINS = 10;

/** Counts per tenth: bin i holds [i/10, (i+1)/10), the last one 1.00 too. */
export function spread(probabilities: readonly number[]): number[] {
  const bins = Array.from({ length: BINS }, () => 0);
  // Two decimals as the file writes them: 0.30 is bin 3, not 2.9999… (hence the rounding before the floor).
  for (const value of probabilities) bins[Math.min(BINS - 1, Math.floor(Math.round(value * 100) / (100 / BINS)))]! += 1;
  return bins;
}

/** How many of them are at or above `threshold`, compared at the file's two decimals. */
export const countAtOrAbove = (probabilities: readonly number[], threshold: number): number =>
  probabilities.filter((value) => Math.round(value * 100) >= Math.round(threshold * 100)).length;

/** The results file cut to its catch-all rows at or above `threshold`: full form, mark kept. */
export function catchAllAtOrAbove(csv: string, threshold: number): string {
  return cutResults(csv, (row, column) => {
    const value = probabilityOf(row[column('probability')]);
    return value !== null && Math.round(value * 100) >= Math.round(threshold * 100);
  });
}
