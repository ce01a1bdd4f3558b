/** This month's calls and cost per operation, from GET /v1/usage (not metered). */
import { callJson, messageOf } from '../api.ts';
import { fill, h } from '../dom.ts';
import { readUsage } from '../models.ts';

export function usagePage(): HTMLElement {
  const body = h('div', { class: 'card' }, h('p', {}, 'Loading…'));
  callJson('/v1/usage', readUsage).then(
    (usage) =>
      fill(
        body,
        h(
          'table',
          {},
          h('caption', {}, `Period ${usage.period} (UTC)`),
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ...['Operation', 'Calls', 'Billable calls', 'Free calls left', 'Cost'].map((name) => h('th', { scope: 'col' }, name)),
            ),
          ),
          h(
            'tbody',
            {},
            ...usage.rows.map((row) =>
              h(
                'tr',
                {},
                h('th', { scope: 'row' }, row.operation),
                h('td', {}, row.calls),
                h('td', {}, row.billableCalls),
                h('td', {}, row.freeRemaining),
                h('td', {}, `$${row.costUsd}`),
              ),
            ),
          ),
          h('tfoot', {}, h('tr', {}, h('th', { scope: 'row', colspan: 4 }, 'Total this month'), h('td', {}, `$${usage.totalCostUsd}`))),
        ),
      ),
    (failure: unknown) => fill(body, h('p', { class: 'error', role: 'alert' }, messageOf(failure))),
  );
  return h('section', {}, h('h1', {}, 'Usage'), body);
}
