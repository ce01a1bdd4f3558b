/**
 * The reasons behind each verdict, beside the verdict chart: "risky" alone does not say whether
 * the domain accepts every address, greylisted, blocked the check or timed out, and each asks for
 * something else (the legend below gives every reason's sentence).
 */
import { h } from './dom.ts';
import { VERDICT_NAMES, type reasonsByVerdict } from './results.ts';

export function reasonBreakdown(byVerdict: ReturnType<typeof reasonsByVerdict>): HTMLElement {
  return h(
    'div',
    { class: 'breakdown', role: 'region', 'aria-label': 'Reasons by verdict' },
    ...VERDICT_NAMES.map((verdict) =>
      h(
        'div',
        {},
        h('h3', { id: `reasons-${verdict}`, class: `verdict-name ${verdict}` }, verdict),
        byVerdict[verdict].length === 0
          ? h('p', { class: 'muted' }, 'None.')
          : h(
              'ul',
              { 'aria-labelledby': `reasons-${verdict}` },
              ...byVerdict[verdict].map(([reason, count]) => h('li', {}, h('code', {}, reason), ' ', h('span', { class: 'n' }, count))),
            ),
      ),
    ),
  );
}
