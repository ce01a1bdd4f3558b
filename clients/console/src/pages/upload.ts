/**
 * A new list: the file is read here first (encoding, rows, address column, distinct addresses,
 * price) and sent only when the user presses `Verify list`, as the file's own bytes with
 * `?column=` set to the column shown. Files the service would refuse are refused here, with what
 * to do, before anything is sent.
 */
import { call, messageOf } from '../api.ts';
import { countAddresses, MAX_ADDRESSES, priceOf, readCsvFile, type ReadFile } from '../csv.ts';
import { field, fill, h } from '../dom.ts';
import { readList } from '../models.ts';

const PREVIEW_ROWS = 5;

function previewTable(file: ReadFile, chosen: number, fileName: string): HTMLElement {
  const head = file.columns.map((name, i) =>
    h('th', { scope: 'col', class: i === chosen ? 'chosen' : false }, name, i === chosen ? h('span', { class: 'badge' }, 'address') : null),
  );
  const rows = file.rows
    .slice(0, PREVIEW_ROWS)
    .map((row) => h('tr', {}, ...file.columns.map((_, i) => h('td', { class: i === chosen ? 'chosen' : false }, row[i] ?? ''))));
  return h(
    'div',
    { class: 'scroll', tabindex: 0, role: 'region', 'aria-label': 'Preview' },
    h(
      'table',
      { class: 'preview' },
      h('caption', {}, `First rows of ${fileName}; the address column is marked`),
      h('thead', {}, h('tr', {}, ...head)),
      h('tbody', {}, ...rows),
    ),
  );
}

export function uploadPanel(onCreated: (id: string) => void): HTMLElement {
  const input = h('input', { type: 'file', accept: '.csv,.tsv,.txt,text/csv,text/tab-separated-values' });
  const error = h('p', { class: 'error', role: 'alert' });
  const details = h('div', { class: 'details' });

  const show = (file: File, read: ReadFile) => {
    const select = h('select', {}, ...read.columns.map((name, i) => h('option', { value: i, selected: i === read.detected.index }, name)));
    const name = h('input', { type: 'text', maxlength: 200, value: file.name.replace(/\.[^.]+$/, '') });
    const summary = h('p', { class: 'price', 'aria-live': 'polite' });
    const preview = h('div');
    const verify = h('button', { type: 'button', class: 'primary' }, 'Verify list');
    const detected = read.columns[read.detected.index] ?? '';
    const update = () => {
      const column = Number(select.value);
      const { addresses, distinct, wellFormed } = countAddresses(read.rows, column);
      const table = previewTable(read, column, file.name);
      fill(preview, table);
      // On a narrow screen the marked column may be off to the side: keep it in view as the width changes.
      const marked = table.querySelector('th.chosen');
      if (marked instanceof HTMLElement) new ResizeObserver(() => (table.scrollLeft = Math.max(0, marked.offsetLeft - 16))).observe(table);
      verify.disabled = wellFormed === 0 || addresses > MAX_ADDRESSES;
      fill(
        summary,
        wellFormed === 0
          ? 'This column holds no addresses: choose the column with the email addresses.'
          : addresses > MAX_ADDRESSES
            ? `This file has ${addresses} addresses; a list takes at most ${MAX_ADDRESSES}: split it.`
            : `${addresses} addresses, ${distinct} distinct. Price: ${priceOf(distinct)} (the batch price per started 100 distinct addresses; your free allowance is used first, and only processed addresses are billed).`,
      );
    };
    select.addEventListener('change', update);
    verify.addEventListener('click', () => {
      verify.disabled = true;
      error.textContent = '';
      const query = new URLSearchParams({ column: String(Number(select.value) + 1) });
      if (name.value.trim() !== '') query.set('name', name.value.trim());
      call(`/v1/email-verify/lists?${query.toString()}`, { method: 'POST', headers: { 'Content-Type': 'text/csv' }, body: file })
        .then(async (response) => onCreated(readList(await response.json()).id))
        .catch((failure: unknown) => {
          error.textContent = messageOf(failure);
          verify.disabled = false;
        });
    });
    fill(
      details,
      h('p', { class: 'detected' }, `Detected address column: ${detected} (by its ${read.detected.by}); read as ${read.encoding}.`),
      field('Address column', select),
      preview,
      field('List name', name),
      summary,
      verify,
    );
    update();
  };

  input.addEventListener('change', () => {
    const file = input.files?.[0];
    fill(details);
    error.textContent = '';
    if (file === undefined) return;
    readCsvFile(file).then(
      (read) => show(file, read),
      (failure: unknown) => (error.textContent = messageOf(failure)),
    );
  });
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'new-list' },
    h('h2', { id: 'new-list' }, 'Verify a list'),
    field(
      'CSV file',
      input,
      'A CSV export (comma, semicolon or tab separated, up to 16 MiB). Nothing is sent until you press Verify list.',
    ),
    error,
    details,
  );
}
