/**
 * The results legend: each verdict's share in percent, then each reason that occurred with its
 * count, share and one plain sentence (what it means, what to do), from the shared contracts'
 * legend (@svc/contracts/rules, the sentences docs/lists.md and verify-list use); and what the
 * full form's extra columns say.
 */
import { FLAGS, resultsLegend, type LegendLine } from '@svc/contracts/rules';
import { h } from './dom.ts';

const percent = (line: LegendLine) => `${line.percent.toFixed(1)} %`;

function table(caption: string, first: string, lines: LegendLine[], className: (code: string) => string | false): HTMLElement {
  return h(
    'div',
    { class: 'scroll', tabindex: 0, role: 'region', 'aria-label': caption },
    h(
      'table',
      { class: 'legend' },
      h('caption', {}, caption),
      h('thead', {}, h('tr', {}, ...[first, 'Rows', 'Share', 'What it means'].map((name) => h('th', { scope: 'col' }, name)))),
      h(
        'tbody',
        {},
        ...lines.map((line) =>
          h(
            'tr',
            {},
            h('th', { scope: 'row', class: className(line.code) }, h('code', {}, line.code)),
            h('td', {}, line.count),
            h('td', {}, percent(line)),
            h('td', { class: 'sentence' }, line.sentence),
          ),
        ),
      ),
    ),
  );
}

/** Reasons counted from the results file's `reason` column (the service's, the last of that name). */
export function countReasons(header: string[], rows: string[][]): Record<string, number> {
  const at = header.lastIndexOf('reason');
  const counts: Record<string, number> = {};
  if (at < 0) return counts;
  for (const row of rows) {
    const reason = row[at] ?? '';
    if (reason !== '') counts[reason] = (counts[reason] ?? 0) + 1;
  }
  return counts;
}

export function legendSection(summary: { deliverable: number; risky: number; undeliverable: number }, reasons: Record<string, number>) {
  const legend = resultsLegend(summary, reasons);
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'legend' },
    h('h2', { id: 'legend' }, 'What the results say'),
    table('Verdicts: share of the verified rows', 'Verdict', legend.verdicts, (code) => `verdict ${code}`),
    legend.reasons.length === 0 ? null : table('Reasons, most frequent first', 'Reason', legend.reasons, () => false),
    h(
      'p',
      { class: 'muted' },
      'The files add these columns to yours: verdict, score (0 to 100), reason (above), did_you_mean (a likely typo fix), ',
      h('code', {}, 'action'),
      ' (keep for deliverable, remove for undeliverable, review for risky), ',
      h('code', {}, 'flags'),
      ` (the checks that were true, separated by semicolons: ${FLAGS.join(', ')}), provider and probability. They start with a byte-order mark, so Excel reads accents right. Rows without an address, or never verified because the list was cancelled, have an empty verdict.`,
    ),
  );
}
