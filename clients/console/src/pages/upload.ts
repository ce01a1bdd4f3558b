/**
 * A new list: the file is read here first (encoding, rows, address column, distinct addresses,
 * price) and sent only when the user presses `Verify list`, as the file's own bytes with
 * `?column=` set to the column shown. Files the service would refuse are refused here, with what
 * to do, before anything is sent.
 */
import { call, callJson, messageOf } from '../api.ts';
import { chargeOf, countAddresses, MAX_ADDRESSES, readCsvFile, type ReadFile } from '../csv.ts';
import { field, fill, h } from '../dom.ts';
import { readList, readUsage } from '../models.ts';

const PREVIEW_ROWS = 5;
/** The workbook's media type (../xlsx.ts has it too; repeated here so that the reader loads only for a workbook). */
const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const isWorkbook = (file: File): boolean => /\.xlsx$/i.test(file.name) || file.type === XLSX_TYPE;
/** The workbook reader (fflate and the sheet's XML) is its own chunk, loaded when a workbook is chosen. */
const readWorkbook = async (file: File) => (await import('../xlsx.ts')).readWorkbookFile(file);

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

/** The price before Verify list: after the key's free units left (shared with batches), and without them. */
function priceSentence(addresses: number, distinct: number, freeUnits: number | undefined): string {
  const { units, free, price, full } = chargeOf(distinct, freeUnits);
  const unitWord = units === 1 ? 'unit' : 'units';
  const allowance =
    freeUnits === undefined
      ? 'your free allowance could not be read, so it is not counted here'
      : free === 0
        ? `no free units left this month, so every unit is billed`
        : `${free} of your ${freeUnits} free ${freeUnits === 1 ? 'unit' : 'units'} left this month ${free === 1 ? 'is' : 'are'} used first`;
  return `${addresses} addresses, ${distinct} distinct. Price: ${price} (${units} ${unitWord} of 100 distinct addresses at the batch price; ${allowance}; ${full} without the free allowance). Only processed addresses are billed.`;
}

export function uploadPanel(onCreated: (id: string) => void): HTMLElement {
  // The free units left (batches and lists share them), read once: pricing a file needs no call of its own.
  const freeUnits = callJson('/v1/usage', readUsage).then(
    (usage) => usage.rows.find((row) => row.operation === 'email-verify.list')?.freeRemaining,
    () => undefined,
  );
  const input = h('input', {
    type: 'file',
    accept: `.csv,.tsv,.txt,.xlsx,text/csv,text/tab-separated-values,${XLSX_TYPE}`,
  });
  const error = h('p', { class: 'error', role: 'alert' });
  const details = h('div', { class: 'details' });

  const show = (file: File, read: ReadFile, freeUnits: number | undefined) => {
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
            : priceSentence(addresses, distinct, freeUnits),
      );
    };
    select.addEventListener('change', update);
    verify.addEventListener('click', () => {
      verify.disabled = true;
      error.textContent = '';
      const query = new URLSearchParams({ column: String(Number(select.value) + 1) });
      if (name.value.trim() !== '') query.set('name', name.value.trim());
      const type = isWorkbook(file) ? XLSX_TYPE : 'text/csv';
      call(`/v1/email-verify/lists?${query.toString()}`, { method: 'POST', headers: { 'Content-Type': type }, body: file })
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
    Promise.all([isWorkbook(file) ? readWorkbook(file) : readCsvFile(file), freeUnits]).then(
      ([read, free]) => show(file, read, free),
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
      'A CSV export (comma, semicolon or tab separated) or an Excel workbook (.xlsx, its first sheet), up to 16 MiB. Nothing is sent until you press Verify list.',
    ),
    error,
    details,
  );
}
