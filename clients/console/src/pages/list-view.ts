/**
 * One list: its progress while it runs (polled each second), then the verdicts as a chart and as
 * text, and the results CSV as four downloads: all rows, and the rows of each verdict (cut here
 * from the API's CSV, which keeps the uploaded columns and appends the result columns).
 */
import { ApiFailure, call, callJson, messageOf } from '../api.ts';
import { VERDICTS, verdictChart } from '../chart.ts';
import { filterResults } from '../csv.ts';
import { confirmCancel } from '../confirm.ts';
import { fill, h, safeFileName } from '../dom.ts';
import { ENDED, readList, type ListObject } from '../models.ts';
import { listName } from './lists.ts';

const POLL_MS = 1_000;

async function downloads(list: ListObject, signal: AbortSignal): Promise<HTMLElement> {
  const response = await call(`/v1/email-verify/lists/${encodeURIComponent(list.id)}/results?format=csv`, { signal });
  const csv = await response.text();
  const base = safeFileName(listName(list));
  const link = (label: string, text: string, suffix: string) => {
    const url = URL.createObjectURL(new Blob([text], { type: 'text/csv;charset=utf-8' }));
    signal.addEventListener('abort', () => URL.revokeObjectURL(url));
    return h('li', {}, h('a', { href: url, download: `${base}${suffix}.csv` }, label));
  };
  return h(
    'ul',
    { class: 'downloads' },
    link('Download all', csv, ''),
    ...VERDICTS.map((verdict) => link(`Download ${verdict}`, filterResults(csv, verdict), `-${verdict}`)),
  );
}

function summary(list: ListObject, signal: AbortSignal): HTMLElement {
  const files = h('div', {}, h('p', {}, 'Preparing the files…'));
  downloads(list, signal).then(
    (links) => fill(files, links),
    (failure: unknown) => fill(files, h('p', { class: 'error', role: 'alert' }, messageOf(failure))),
  );
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'verdicts' },
    h('h2', { id: 'verdicts' }, 'Verdicts'),
    verdictChart(list.summary),
    h(
      'dl',
      { class: 'counts' },
      ...VERDICTS.flatMap((verdict) => [h('dt', { class: verdict }, verdict), h('dd', {}, list.summary[verdict])]),
    ),
    files,
  );
}

export function listView(id: string, signal: AbortSignal): HTMLElement {
  const title = h('h1', {}, 'List');
  const bar = h('div', { class: 'bar' });
  const progress = h(
    'div',
    { role: 'progressbar', 'aria-label': 'Progress', 'aria-valuemin': 0, 'aria-valuemax': 100, 'aria-valuenow': 0, class: 'progress' },
    bar,
  );
  const status = h('p', { class: 'status', 'aria-live': 'polite' });
  const read = h('p', { class: 'detected' });
  const error = h('p', { class: 'error', role: 'alert' });
  const cancel = h('button', { type: 'button', hidden: true }, 'Cancel');
  const result = h('div');

  const show = (list: ListObject) => {
    title.textContent = listName(list);
    const percent = list.count === 0 ? 100 : Math.floor((list.processed / list.count) * 100);
    progress.setAttribute('aria-valuenow', String(percent));
    progress.setAttribute('aria-valuetext', `${percent}% processed, ${list.status}`);
    bar.style.width = `${percent}%`;
    // The list object says which column and encoding the service read (its index base is the service's: not shown).
    read.textContent =
      list.column === undefined
        ? ''
        : `Address column read by the service: ${list.column.header}${list.encoding === undefined ? '' : ` (${list.encoding})`}.`;
    status.textContent = `Status: ${list.status}. ${list.processed} of ${list.count} entries processed (${list.distinct} distinct); cost so far $${list.costUsd}.${list.error === undefined ? '' : ` ${list.error}`}`;
    cancel.hidden = ENDED.has(list.status);
  };
  const poll = async () => {
    while (!signal.aborted) {
      try {
        const list = await callJson(`/v1/email-verify/lists/${encodeURIComponent(id)}`, readList, { signal });
        show(list);
        if (ENDED.has(list.status)) return fill(result, summary(list, signal));
      } catch (failure) {
        if (signal.aborted) return;
        error.textContent = messageOf(failure);
        // A refusal (no such list, a revoked key) will not change by asking again; a lost connection may.
        if (failure instanceof ApiFailure && failure.status >= 400 && failure.status < 500 && failure.status !== 429) return;
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  };
  cancel.addEventListener('click', () => {
    void confirmCancel(title.textContent ?? id).then((confirmed) => {
      if (!confirmed) return;
      cancel.disabled = true;
      call(`/v1/email-verify/lists/${encodeURIComponent(id)}`, { method: 'DELETE' })
        .catch((failure: unknown) => (error.textContent = messageOf(failure)))
        .finally(() => (cancel.disabled = false));
    });
  });
  void poll();
  return h('div', {}, title, h('section', { class: 'card' }, read, status, progress, cancel, error), result);
}
