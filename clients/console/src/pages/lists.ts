/** Lists: a new upload, and the key's earlier lists (newest first), each reopenable and, while active, cancellable. */
import { call, callJson, messageOf } from '../api.ts';
import { confirmCancel } from '../confirm.ts';
import { fill, h } from '../dom.ts';
import { ENDED, readListPage, type ListObject } from '../models.ts';
import { uploadPanel } from './upload.ts';

export const listName = (list: ListObject): string => list.name ?? list.id;

function historyRow(list: ListObject, refresh: () => void, error: HTMLElement): HTMLElement {
  const cancel = ENDED.has(list.status) ? null : h('button', { type: 'button' }, 'Cancel');
  cancel?.addEventListener('click', () => {
    void confirmCancel(listName(list)).then((confirmed) => {
      if (!confirmed) return;
      cancel.disabled = true;
      call(`/v1/email-verify/lists/${encodeURIComponent(list.id)}`, { method: 'DELETE' }).then(refresh, (failure: unknown) => {
        error.textContent = messageOf(failure);
        cancel.disabled = false;
      });
    });
  });
  return h(
    'tr',
    {},
    h('th', { scope: 'row' }, h('a', { href: `#/lists/${encodeURIComponent(list.id)}` }, listName(list))),
    h('td', {}, new Date(list.createdAt).toLocaleString()),
    h('td', {}, list.status),
    h('td', {}, `${list.processed} / ${list.count}`),
    h('td', {}, `$${list.costUsd}`),
    h('td', {}, cancel),
  );
}

const PAGE_SIZE = 20;

function history(): HTMLElement {
  const body = h('div', {}, h('p', {}, 'Loading…'));
  const error = h('p', { class: 'error', role: 'alert' });
  const more = h('button', { type: 'button', hidden: true }, 'Show older lists');
  let rows = h('tbody');
  let next: string | null = null;
  // Older pages are appended under the newer ones: every list of the key can be reached, not the latest 20 only.
  const load = (cursor: string | null, append: (lists: ListObject[]) => void) => {
    const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
    if (cursor !== null) query.set('cursor', cursor);
    more.disabled = true;
    callJson(`/v1/email-verify/lists?${query.toString()}`, readListPage).then(
      (page) => {
        append(page.lists);
        next = page.nextCursor;
        more.hidden = next === null;
        more.disabled = false;
      },
      (failure: unknown) => {
        error.textContent = messageOf(failure);
        more.disabled = false;
      },
    );
  };
  const refresh = () =>
    load(null, (lists) => {
      rows = h('tbody', {}, ...lists.map((list) => historyRow(list, refresh, error)));
      fill(
        body,
        lists.length === 0
          ? h('p', {}, 'No lists yet.')
          : h(
              'div',
              { class: 'scroll', tabindex: 0, role: 'region', 'aria-label': 'History, newest first' },
              h(
                'table',
                {},
                h(
                  'thead',
                  {},
                  h(
                    'tr',
                    {},
                    ...['List', 'Created', 'Status', 'Processed', 'Cost', 'Action'].map((name) => h('th', { scope: 'col' }, name)),
                  ),
                ),
                rows,
              ),
            ),
      );
    });
  more.addEventListener('click', () => load(next, (lists) => rows.append(...lists.map((list) => historyRow(list, refresh, error)))));
  refresh();
  return h('section', { class: 'card', 'aria-labelledby': 'your-lists' }, h('h2', { id: 'your-lists' }, 'History'), error, body, more);
}

export function listsPage(open: (id: string) => void): HTMLElement {
  return h('div', {}, h('h1', {}, 'Lists'), uploadPanel(open), history());
}
