/**
 * Feedback: a CSV of what happened when the user sent mail (bounces above all, exported from the
 * sending service), read here and posted to the generic feedback door
 * (`POST /v1/email-verify/feedback`, free) in calls of up to 1,000 events. The page says which
 * columns it reads, shows what it found before anything is sent, then how many events the service
 * recorded and which rows were refused (by the page, with why; by the service, counted).
 */
import { call, isRecord, messageOf } from '../api.ts';
import { readCsvFile, type ReadFile } from '../csv.ts';
import { field, fill, h } from '../dom.ts';
import { chunks, feedbackRows, findOutcomeColumn, OUTCOMES, type FeedbackRows, type Refused } from '../feedback-csv.ts';

const SHOWN_REFUSALS = 200;

/** The door's answer `{ accepted, ignored }`, checked. */
function readAnswer(value: unknown): { accepted: number; ignored: number } {
  if (!isRecord(value) || typeof value.accepted !== 'number' || typeof value.ignored !== 'number')
    throw new Error('The service answered something unexpected (feedback).');
  return { accepted: value.accepted, ignored: value.ignored };
}

function refusedTable(refused: Refused[]): HTMLElement | null {
  if (refused.length === 0) return null;
  const shown = refused.slice(0, SHOWN_REFUSALS);
  return h(
    'div',
    { class: 'scroll', tabindex: 0, role: 'region', 'aria-label': 'Refused rows' },
    h(
      'table',
      {},
      h('caption', {}, `Refused rows (not sent)${refused.length > shown.length ? `: the first ${shown.length} of ${refused.length}` : ''}`),
      h('thead', {}, h('tr', {}, ...['Row', 'Address', 'Why'].map((name) => h('th', { scope: 'col' }, name)))),
      h('tbody', {}, ...shown.map((entry) => h('tr', {}, h('td', {}, entry.row), h('td', {}, entry.address), h('td', {}, entry.why)))),
    ),
  );
}

const plural = (count: number, word: string): string => `${count} ${word}${count === 1 ? '' : 's'}`;

const found = (rows: FeedbackRows): string =>
  `${plural(rows.events.length, 'event')} to send: ${OUTCOMES.map((outcome) => `${rows.counts[outcome]} ${outcome}`).join(', ')}; ${plural(rows.refused.length, 'row')} refused.`;

function details(file: File, read: ReadFile, error: HTMLElement): HTMLElement {
  const options = (chosen: number) => read.columns.map((name, i) => h('option', { value: i, selected: i === chosen }, name));
  const addressSelect = h('select', {}, ...options(read.detected.index));
  const outcomeIndex = findOutcomeColumn(read, read.detected.index);
  const outcomeSelect = h('select', {}, ...options(outcomeIndex ?? -1));
  if (outcomeIndex === null) outcomeSelect.prepend(h('option', { value: '', selected: true }, 'Choose the outcome column'));
  const summary = h('p', { class: 'price', 'aria-live': 'polite' });
  const refusals = h('div');
  const send = h('button', { type: 'button', class: 'primary' }, 'Send feedback');
  const outcome = h('div', { role: 'status' });
  let rows: FeedbackRows | undefined;
  const update = () => {
    fill(outcome);
    if (outcomeSelect.value === '') {
      rows = undefined;
      fill(summary, 'No column of this file reads as outcomes: choose the outcome column.');
      fill(refusals);
      send.disabled = true;
      return;
    }
    rows = feedbackRows(read, Number(addressSelect.value), Number(outcomeSelect.value));
    fill(summary, found(rows));
    fill(refusals, refusedTable(rows.refused));
    send.disabled = rows.events.length === 0;
  };
  addressSelect.addEventListener('change', update);
  outcomeSelect.addEventListener('change', update);
  send.addEventListener('click', () => {
    const events = rows?.events ?? [];
    if (events.length === 0) return;
    send.disabled = true;
    error.textContent = '';
    void (async () => {
      let accepted = 0;
      let ignored = 0;
      try {
        for (const part of chunks(events)) {
          const response = await call('/v1/email-verify/feedback', {
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify({ events: part }),
          });
          const answer = readAnswer(await response.json());
          accepted += answer.accepted;
          ignored += answer.ignored;
          fill(outcome, h('p', {}, `Sending… ${accepted + ignored} of ${plural(events.length, 'event')} so far.`));
        }
        fill(
          outcome,
          h(
            'p',
            { class: 'done' },
            `Recorded ${plural(accepted, 'event')} from ${file.name}.${ignored === 0 ? '' : ` The service ignored ${ignored} more: their addresses are not well-formed.`} ${plural(rows?.refused.length ?? 0, 'row')} refused here and not sent.`,
          ),
          h('p', { class: 'muted' }, 'Your later verifications answer from them.'),
        );
      } catch (failure) {
        error.textContent = `${messageOf(failure)} ${accepted} events were recorded before this.`;
        send.disabled = false;
      }
    })();
  });
  const box = h(
    'div',
    { class: 'details' },
    h('p', { class: 'detected' }, `Read as ${read.encoding}; ${read.rows.length} rows.`),
    h('div', { class: 'row' }, field('Address column', addressSelect), field('Outcome column', outcomeSelect)),
    summary,
    refusals,
    send,
    outcome,
  );
  update();
  return box;
}

export function feedbackPage(): HTMLElement {
  const input = h('input', { type: 'file', accept: '.csv,.tsv,.txt,text/csv,text/tab-separated-values' });
  const error = h('p', { class: 'error', role: 'alert' });
  const holder = h('div');
  input.addEventListener('change', () => {
    const file = input.files?.[0];
    fill(holder);
    error.textContent = '';
    if (file === undefined) return;
    readCsvFile(file).then(
      (read) => fill(holder, details(file, read, error)),
      (failure: unknown) => (error.textContent = messageOf(failure)),
    );
  });
  return h(
    'div',
    {},
    h('h1', {}, 'Feedback'),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'report' },
      h('h2', { id: 'report' }, 'Report bounces and deliveries'),
      h(
        'p',
        {},
        'Tell the service what happened when you sent mail: later verifications by your key answer from it. An address that hard-bounced is undeliverable (known_bounce) without being probed again; one that complained is risky (complainer); a delivered address at a catch-all domain is deliverable (known_delivery), and the deliveries and bounces at catch-all domains give their other addresses a probability. Free.',
      ),
      h('p', {}, 'The page reads two columns of a CSV file (comma, semicolon or tab separated), and nothing else:'),
      h(
        'ul',
        {},
        h('li', {}, h('strong', {}, 'the address'), ': the column of e-mail addresses, found as for a list;'),
        h(
          'li',
          {},
          h('strong', {}, 'the outcome'),
          ': a column named outcome, event, type or status (or whose cells are outcomes), each cell one of ',
          h('code', {}, 'hard_bounce'),
          ', ',
          h('code', {}, 'soft_bounce'),
          ', ',
          h('code', {}, 'delivered'),
          ', ',
          h('code', {}, 'complaint'),
          ' (also as sending services export them: bounce, bounced, deferred, delivery, spam, spamreport).',
        ),
      ),
      h(
        'p',
        { class: 'muted' },
        'Each event is dated when it is sent here. Rows without an address or an outcome are refused and listed; nothing is sent until you press Send feedback.',
      ),
      field('CSV file', input),
      error,
      holder,
    ),
  );
}
