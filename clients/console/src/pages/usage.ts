/**
 * This month's usage from GET /v1/usage (not metered), as a bill reads: per operation what was
 * used (list addresses as addresses, with the units of 100 they were billed in), the free
 * allowance left (the batch allowance once, for batches and lists, which share it), the unit
 * price, what was billed and its cost; the month's total.
 */
import { OPERATIONS, OPERATION_IDS, type OperationId } from '@svc/contracts/rules';
import { callJson, messageOf } from '../api.ts';
import { fill, h } from '../dom.ts';
import { readUsage, type UsageRow } from '../models.ts';

const NAMES: Record<OperationId, string> = {
  'email-verify.batch': 'Batch verification',
  'email-verify.single': 'Single verification',
  'qr.generate': 'QR codes',
  'qr.wifi': 'Wifi QR codes',
  'email-verify.list': 'List verification',
};
const UNITS: Record<OperationId, [string, string]> = {
  'email-verify.batch': ['call', 'calls'],
  'email-verify.single': ['call', 'calls'],
  'qr.generate': ['code', 'codes'],
  'qr.wifi': ['code', 'codes'],
  'email-verify.list': ['unit of 100 addresses', 'units of 100 addresses'],
};
const isOperation = (value: string): value is OperationId => (OPERATION_IDS as readonly string[]).includes(value);
const plural = (count: number, [one, many]: [string, string]) => `${count.toLocaleString('en-US')} ${count === 1 ? one : many}`;

/** `$0.15`, `$0.003`, `$0.0005`: the unit price with the digits it needs (at least cents). */
function unitPrice(row: UsageRow, operation: OperationId): string {
  if (row.priceUsd !== undefined) {
    const [whole, cents = ''] = row.priceUsd.split('.');
    return `$${whole}.${cents.padEnd(2, '0')}`;
  }
  const dollars = OPERATIONS[operation].priceMicroUsd / 1_000_000;
  return `$${dollars.toFixed(Math.max(2, String(dollars).split('.')[1]?.length ?? 0))}`;
}

function used(row: UsageRow, operation: OperationId): string {
  if (operation !== 'email-verify.list') return plural(row.calls, UNITS[operation]);
  const units = plural(row.calls, UNITS[operation]);
  return row.addresses === undefined ? units : `${row.addresses.toLocaleString('en-US')} addresses (${units})`;
}

function freeLeft(row: UsageRow, operation: OperationId): string {
  // Lists draw on the batch allowance: said once, on the batch row.
  if (operation === 'email-verify.list') return 'shared with batches';
  const left = plural(row.freeRemaining, operation === 'email-verify.batch' ? ['unit', 'units'] : UNITS[operation]);
  return row.freeAllowance === undefined ? left : `${left} of ${row.freeAllowance.toLocaleString('en-US')}`;
}

function priceCell(row: UsageRow, operation: OperationId): string {
  const per = operation === 'email-verify.list' ? 'per 100 distinct addresses' : `per ${UNITS[operation][0]}`;
  return `${unitPrice(row, operation)} ${per}`;
}

export function usagePage(): HTMLElement {
  const body = h('div', { class: 'card' }, h('p', {}, 'Loading…'));
  callJson('/v1/usage', readUsage).then(
    (usage) => {
      const rows = usage.rows.filter((row): row is UsageRow & { operation: OperationId } => isOperation(row.operation));
      fill(
        body,
        h(
          'div',
          { class: 'scroll', tabindex: 0, role: 'region', 'aria-label': 'Usage this month' },
          h(
            'table',
            { class: 'usage' },
            h('caption', {}, `This month, ${usage.period} (UTC)`),
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                ...['Operation', 'Used', 'Free left', 'Unit price', 'Billed', 'Cost'].map((name) => h('th', { scope: 'col' }, name)),
              ),
            ),
            h(
              'tbody',
              {},
              ...rows.map((row) =>
                h(
                  'tr',
                  {},
                  h('th', { scope: 'row' }, NAMES[row.operation], h('br'), h('code', {}, row.operation)),
                  h('td', {}, used(row, row.operation)),
                  h('td', {}, freeLeft(row, row.operation)),
                  h('td', {}, priceCell(row, row.operation)),
                  h('td', {}, row.billableCalls.toLocaleString('en-US')),
                  h('td', {}, `$${row.costUsd}`),
                ),
              ),
            ),
            h('tfoot', {}, h('tr', {}, h('th', { scope: 'row', colspan: 5 }, 'Total this month'), h('td', {}, `$${usage.totalCostUsd}`))),
          ),
        ),
        h(
          'p',
          { class: 'muted' },
          'Batches and lists share one free allowance: a batch call of up to 100 addresses, or 100 distinct addresses of a list, is one unit. Calls inside the free allowance cost nothing; refused calls are never billed.',
        ),
      );
    },
    (failure: unknown) => fill(body, h('p', { class: 'error', role: 'alert' }, messageOf(failure))),
  );
  return h('section', {}, h('h1', {}, 'Usage'), body);
}
