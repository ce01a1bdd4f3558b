/**
 * One list: its progress while it runs (polled each second), then the verdicts as a chart and as
 * text with their shares, the results CSV as four downloads (all rows, and the rows of each
 * verdict, cut here from the API's full-form CSV, which keeps the uploaded columns and appends
 * the result columns), the reasons behind each verdict beside the chart, the spread of the
 * catch-all addresses' probability with their download, and the legend of verdicts and reasons.
 */
import Papa from 'papaparse';
import { ApiFailure, call, callJson, messageOf } from '../api.ts';
import { VERDICTS, verdictChart } from '../chart.ts';
import { filterResults } from '../csv.ts';
import { countReasons, legendSection } from '../legend.ts';
import { reasonBreakdown } from '../breakdown.ts';
import { catchAllSection } from '../catch-all.ts';
import { catchAllProbabilities, reasonsByVerdict } from '../results.ts';
import { confirmCancel } from '../confirm.ts';
import { fill, h, safeFileName } from '../dom.ts';
import { ENDED, readList, type ListObject } from '../models.ts';
import { timeLeft, waitingLines } from '../waiting.ts';
import { listName } from './lists.ts';

const POLL_MS = 1_000;

/**
 * The results file in its full form (`columns=full`: action and flags too), kept as bytes so that
 * its UTF-8 byte-order mark survives (response.text() drops it, and Excel on Windows then reads
 * "Smørrebrød" as "SmÃ¸rrebrÃ¸d"); the per-verdict files are cut from it with the mark kept.
 */
async function resultsFile(list: ListObject, signal: AbortSignal): Promise<{ bytes: ArrayBuffer; text: string }> {
  const response = await call(`/v1/email-verify/lists/${encodeURIComponent(list.id)}/results?format=csv&columns=full`, { signal });
  const bytes = await response.arrayBuffer();
  return { bytes, text: new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes) };
}

function downloads(list: ListObject, file: { bytes: ArrayBuffer; text: string }, signal: AbortSignal): HTMLElement {
  const base = safeFileName(listName(list));
  const link = (label: string, content: BlobPart, suffix: string) => {
    const url = URL.createObjectURL(new Blob([content], { type: 'text/csv;charset=utf-8' }));
    signal.addEventListener('abort', () => URL.revokeObjectURL(url));
    return h('li', {}, h('a', { href: url, download: `${base}${suffix}.csv` }, label));
  };
  return h(
    'ul',
    { class: 'downloads' },
    link('Download all', file.bytes, ''),
    ...VERDICTS.map((verdict) => link(`Download ${verdict}`, filterResults(file.text, verdict), `-${verdict}`)),
  );
}

const share = (count: number, total: number) => (total === 0 ? '0.0 %' : `${((count * 100) / total).toFixed(1)} %`);

function summary(list: ListObject, signal: AbortSignal): HTMLElement {
  const files = h('div', {}, h('p', {}, 'Preparing the files…'));
  const breakdown = h('div', { class: 'beside' });
  const catchAll = h('div');
  const legend = h('div');
  resultsFile(list, signal).then(
    (file) => {
      fill(files, downloads(list, file, signal));
      const parsed = Papa.parse<string[]>(file.text.replace(/^\ufeff/, ''), { skipEmptyLines: 'greedy' });
      const [header = [], ...rows] = parsed.data;
      fill(breakdown, reasonBreakdown(reasonsByVerdict(header, rows)));
      fill(catchAll, catchAllSection(file.text, catchAllProbabilities(header, rows), safeFileName(listName(list)), signal));
      fill(legend, legendSection(list.summary, countReasons(header, rows)));
    },
    (failure: unknown) => fill(files, h('p', { class: 'error', role: 'alert' }, messageOf(failure))),
  );
  const total = VERDICTS.reduce((sum, verdict) => sum + list.summary[verdict], 0);
  return h(
    'div',
    {},
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'verdicts' },
      h('h2', { id: 'verdicts' }, 'Verdicts'),
      verdictChart(list.summary),
      h(
        'div',
        { class: 'verdict-row' },
        h(
          'dl',
          { class: 'counts' },
          ...VERDICTS.flatMap((verdict) => [
            h('dt', { class: verdict }, verdict),
            h('dd', {}, `${list.summary[verdict]} (${share(list.summary[verdict], total)})`),
          ]),
        ),
        breakdown,
      ),
      files,
    ),
    catchAll,
    legend,
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
  const finish = h('button', { type: 'button', class: 'primary' }, 'Finish now');
  const waitingText = h('div', { 'aria-live': 'polite' });
  const waitingPanel = h(
    'section',
    { class: 'card waiting', 'aria-labelledby': 'waiting-title', hidden: true },
    h('h2', { id: 'waiting-title' }, 'Waiting for retries'),
    waitingText,
    h(
      'p',
      { class: 'muted' },
      'What is settled can be downloaded below now; the waiting addresses join the files when they settle. Finish now settles them at once as risky, with the reason they were waiting for, and completes the list.',
    ),
    finish,
  );
  const result = h('div');
  // The settled part is shown again when it grows (a retry settled some), not at every poll.
  let shownSettled = '';

  const show = (list: ListObject) => {
    title.textContent = listName(list);
    const percent = list.count === 0 ? 100 : Math.floor((list.processed / list.count) * 100);
    progress.setAttribute('aria-valuenow', String(percent));
    progress.setAttribute('aria-valuetext', `${percent}% processed, ${list.status}`);
    bar.style.width = `${percent}%`;
    // The list object says which column and encoding the service read; by its header, or by its
    // position (from 1, as the contract counts) in a file without a header row.
    const encoding = list.encoding === undefined ? '' : ` (${list.encoding})`;
    read.textContent =
      list.column === undefined
        ? ''
        : `Address column read by the service: ${list.column.header ?? `column ${list.column.index} (the file has no header row)`}${encoding}.`;
    const left = list.status === 'running' ? timeLeft(list, new Date()) : '';
    status.textContent = `Status: ${list.status}. ${list.processed} of ${list.count} entries processed (${list.distinct} distinct); cost so far $${list.costUsd}.${left === '' ? '' : ` ${left}`}${list.error === undefined ? '' : ` ${list.error}`}`;
    cancel.hidden = ENDED.has(list.status);
    waitingPanel.hidden = list.status !== 'retrying';
    if (list.status === 'retrying') {
      fill(waitingText, ...waitingLines(list, new Date()).map((line) => h('p', {}, line)));
      const settled = `${list.processed}`;
      if (settled !== shownSettled) {
        shownSettled = settled;
        fill(result, summary(list, signal));
      }
    }
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
  finish.addEventListener('click', () => {
    finish.disabled = true;
    call(`/v1/email-verify/lists/${encodeURIComponent(id)}/finish`, { method: 'POST' })
      .then(() => (error.textContent = ''))
      .catch((failure: unknown) => (error.textContent = messageOf(failure)))
      .finally(() => (finish.disabled = false));
  });
  void poll();
  return h('div', {}, title, h('section', { class: 'card' }, read, status, progress, cancel, error), waitingPanel, result);
}
