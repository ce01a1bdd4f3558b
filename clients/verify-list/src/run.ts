/**
 * One run of `verify-list`: upload the file (or take up a list by id), follow it with a progress
 * line until it ends, then stream its CSV results beside the input. The list lives on the
 * server: stopping the client stops none of it, and `--resume` picks it up again.
 */
import { stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiFailure, ENDED, ListApi, type ListObject } from './api.ts';
import type { Options } from './options.ts';
import { RateMeter, progressLine } from './progress.ts';

/** Where the run says things: notices and the progress line go to the terminal (stderr), the outcome to stdout. */
export interface Reporter {
  notice(message: string): void;
  progress(line: string): void;
  result(message: string): void;
  /** True when the progress line is redrawn in place (a terminal), false for a log. */
  readonly interactive: boolean;
  /**
   * Asks a yes/no question while the run goes on (a terminal only: absent otherwise); answers
   * true for yes. Dropped, unanswered, when `signal` aborts.
   */
  ask?: (question: string, signal: AbortSignal) => Promise<boolean>;
}

export interface RunState {
  /** The list, once it exists: an interruption then prints how to resume it. */
  listId: string | undefined;
}

const MIB = 1024 * 1024;
/** A log gets a progress line at most this often (and at every change of status). */
const LOG_EVERY_MS = 10_000;

/** The API's refusals of an upload, said in terms of the file. */
function explainFailure(failure: ApiFailure, options: Options, sizeBytes?: number, listId?: string): string {
  const said = `${failure.status} ${failure.code}: ${failure.apiMessage}`;
  const file = options.input ?? 'the file';
  switch (failure.code) {
    case 'unauthorized':
      return `the API refused the key (${said}). Set VERIFY_API_KEY (or --key) to a key of the service at ${options.url}.`;
    case 'payload_too_large': {
      const size = sizeBytes === undefined ? '' : ` is ${(sizeBytes / MIB).toFixed(1)} MiB:`;
      return `${file}${size} too large for one list (${said}). Split it into files of at most 16 MiB.`;
    }
    case 'invalid_parameter':
      return failure.apiMessage.includes('column') ? `${file}: ${said} Check --column.` : said;
    case 'invalid_request':
      return /No column/.test(failure.apiMessage) ? `${file}: ${said} Pass --column <header or number>.` : said;
    case 'too_many_emails':
      return `${file} holds more addresses than one list takes (${said}). Split it into several files.`;
    case 'not_found':
      return (
        `no list ${listId ?? options.resume ?? ''} for this key (${said}). A list's data is kept 7 days after it ends; ` +
        'a server in embedded mode (without Redis) forgets its lists when it restarts.'
      );
    default:
      return said;
  }
}

async function follow(api: ListApi, list: ListObject, options: Options, reporter: Reporter, signal: AbortSignal): Promise<ListObject> {
  const meter = new RateMeter();
  let lastLogged = 0;
  let lastStatus = '';
  let current = list;
  // Finish now: asked for with --finish, or answered yes in a terminal once the list retries.
  let finishNow = false;
  let asked = false;
  const question = new AbortController();
  const stopAsking = () => question.abort();
  signal.addEventListener('abort', stopAsking, { once: true });
  try {
    for (;;) {
      if (current.status === 'retrying') {
        if (options.finish || finishNow) {
          reporter.notice(`finishing: the ${current.waiting ?? current.count - current.processed} waiting entries are written as risky`);
          current = await api.finish(current.id);
          finishNow = false;
        } else if (!asked && reporter.ask !== undefined) {
          asked = true;
          const waiting = current.waiting ?? current.count - current.processed;
          reporter
            .ask(`${waiting} entries wait for a retry. Finish now and write them as risky? [y/N] `, question.signal)
            .then((yes) => {
              finishNow = yes;
            })
            .catch(() => undefined);
        }
      }
      const done = await step();
      if (done !== undefined) return done;
    }
  } finally {
    signal.removeEventListener('abort', stopAsking);
    stopAsking();
  }

  async function step(): Promise<ListObject | undefined> {
    meter.add(Date.now(), current.processed);
    const interactive = reporter.interactive;
    if (interactive || current.status !== lastStatus || Date.now() - lastLogged >= LOG_EVERY_MS) {
      reporter.progress(progressLine(current, meter.rate(), { bar: interactive }));
      lastLogged = Date.now();
      lastStatus = current.status;
    }
    if (ENDED.includes(current.status)) return current;
    await sleep(options.intervalMs, undefined, { signal });
    current = await api.get(current.id);
    return undefined;
  }
}

/** Which column and encoding the service read, so that a wrong guess is seen before the list is far along. */
export function sourceLine(list: ListObject): string | undefined {
  if (list.column === undefined) return undefined;
  const { index, header } = list.column;
  const column = header === null ? `column ${index} (the file has no header row)` : `column ${index}, "${header}"`;
  return `addresses read from ${column}; file read as ${list.encoding ?? 'utf-8'}`;
}

function summary(list: ListObject): string {
  const { deliverable, risky, undeliverable } = list.summary;
  const n = (value: number) => value.toLocaleString('en-US');
  return (
    `${n(list.processed)} of ${n(list.count)} entries verified (${n(list.distinct)} distinct addresses): ` +
    `${n(deliverable)} deliverable, ${n(risky)} risky, ${n(undeliverable)} undeliverable; cost $${list.costUsd}`
  );
}

/** Runs to the end; answers the exit code (0: every entry verified, 1: the list did not complete). */
export async function run(options: Options, reporter: Reporter, state: RunState, signal: AbortSignal): Promise<number> {
  const api = new ListApi({ url: options.url, key: options.key, signal, notice: (message) => reporter.notice(message) });
  let list: ListObject;
  if (options.resume !== undefined) {
    state.listId = options.resume;
    try {
      list = await api.get(options.resume);
    } catch (error) {
      if (error instanceof ApiFailure) throw new Error(explainFailure(error, options));
      throw error;
    }
    reporter.notice(`resuming list ${list.id} (${list.status})`);
    const source = sourceLine(list);
    if (source !== undefined) reporter.notice(source);
  } else {
    const file = options.input;
    if (file === undefined) throw new Error('no file to upload');
    const size = await stat(file).then(
      (found) => found.size,
      (error: NodeJS.ErrnoException) => {
        throw new Error(`cannot read ${file} (${error.code ?? error.message})`);
      },
    );
    reporter.notice(`uploading ${file} (${(size / MIB).toFixed(1)} MiB) to ${options.url}`);
    try {
      list = await api.create(file, { name: options.name, callbackUrl: options.callbackUrl, column: options.column });
    } catch (error) {
      if (error instanceof ApiFailure) throw new Error(explainFailure(error, options, size));
      throw error;
    }
    state.listId = list.id;
    reporter.notice(
      `list ${list.id} created: ${list.count.toLocaleString('en-US')} entries, ${list.distinct.toLocaleString('en-US')} distinct addresses`,
    );
    const source = sourceLine(list);
    if (source !== undefined) reporter.notice(source);
  }

  let ended: ListObject;
  let pending: number;
  try {
    ended = await follow(api, list, options, reporter, signal);
    ({ pending } = await api.download(ended.id, options.output));
  } catch (error) {
    if (error instanceof ApiFailure) throw new Error(explainFailure(error, options, undefined, list.id));
    throw error;
  }
  if (ended.status === 'completed') {
    reporter.result(`${summary(ended)}. Wrote ${options.output}.`);
    return 0;
  }
  const why = ended.status === 'failed' ? `failed (${ended.error ?? 'no reason given'})` : 'was cancelled';
  reporter.result(
    `The list ${why}: ${summary(ended)}. Wrote the ${ended.processed.toLocaleString('en-US')} verified entries to ${options.output}; ` +
      `${pending.toLocaleString('en-US')} are left out.`,
  );
  return 1;
}
