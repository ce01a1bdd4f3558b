/**
 * The command line of `verify-list`, read with Node's own `util.parseArgs`: what to upload or
 * resume, where the API is, where the verified file goes. Pure: the environment comes in as an
 * argument, problems come out as a `UsageError`.
 */
import { basename, dirname, extname, join } from 'node:path';
import { parseArgs } from 'node:util';

export const DEFAULT_URL = 'http://localhost:3000';
const DEFAULT_INTERVAL_S = 2;
const NAME_MAX = 200;

export const USAGE = `Usage: verify-list <file.csv> [options]
       verify-list --resume <list id> [<file.csv>] [options]

Verifies every address of a CSV file through the list API and writes <file>.verified.csv beside
it: the file's own columns with verdict, score, reason, did_you_mean, action (keep, review,
remove), flags, provider and probability appended, in input order.

Options:
  --url <url>            the API (default: $VERIFY_API_URL, else ${DEFAULT_URL})
  --key <key>            the API key (default: $VERIFY_API_KEY; prefer the variable: a command
                         line is visible to other users of the machine)
  --column <column>      the column holding the addresses: its header, or its number counted
                         from 1 (default: the service finds it by header, else by content,
                         and says which it read)
  --name <name>          a name for the list (default: the file's name)
  --callback-url <url>   https:// URL the service POSTs the list to when it ends
  -o, --output <file>    where to write the verified CSV (default: <file>.verified.csv)
  --resume <id>          follow a list already uploaded (after an interruption) instead of
                         uploading; give the file too to write the output beside it
  --interval <seconds>   how often to poll the list (default: ${DEFAULT_INTERVAL_S})
  --finish               once only greylisted or unreachable addresses wait for a retry, finish
                         the list at once: they are written as risky with the reason they waited
                         for (in a terminal, without it, you are asked whether to)
  -h, --help             this text

Ctrl-C stops the client, not the list: it prints the command that resumes.`;

export class UsageError extends Error {}

export interface Options {
  /** The CSV file to upload; with `--resume`, optional (it places the output). */
  input: string | undefined;
  resume: string | undefined;
  url: string;
  /** Where the URL came from: the resume command repeats only what the environment will not give again. */
  urlFromFlag: boolean;
  key: string;
  keyFromFlag: boolean;
  name: string | undefined;
  callbackUrl: string | undefined;
  /** The address column, as `?column=` takes it. */
  column: string | undefined;
  output: string;
  outputFromFlag: boolean;
  intervalMs: number;
  /** Finish the list as soon as it is retrying. */
  finish: boolean;
}

/** `contacts.csv` → `contacts.verified.csv`, in the same directory. */
export function verifiedPath(input: string): string {
  const extension = extname(input);
  const stem = basename(input, extension);
  return join(dirname(input), `${stem}.verified.csv`);
}

const LIST_ID = /^lst_[0-9a-f]{24}$/;

/** The options, `'help'` for -h, or a UsageError that says what is wrong. */
export function parseOptions(argv: string[], env: Record<string, string | undefined>): Options | 'help' {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        url: { type: 'string' },
        key: { type: 'string' },
        name: { type: 'string' },
        column: { type: 'string' },
        'callback-url': { type: 'string' },
        output: { type: 'string', short: 'o' },
        resume: { type: 'string' },
        interval: { type: 'string' },
        finish: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  if (values.help === true) return 'help';
  if (positionals.length > 1) throw new UsageError(`one file at a time (got ${positionals.length})`);
  const input = positionals[0];
  const resume = values.resume;
  if (input === undefined && resume === undefined) throw new UsageError('give the CSV file to verify (or --resume <list id>)');
  if (resume !== undefined && !LIST_ID.test(resume))
    throw new UsageError(`--resume takes a list id, lst_ and 24 hex digits (got "${resume}")`);
  if (resume !== undefined && (values.name !== undefined || values['callback-url'] !== undefined || values.column !== undefined))
    throw new UsageError('--name, --callback-url and --column are given when the list is created, not when it is resumed');
  const column = values.column?.trim();
  if (column !== undefined && (column.length === 0 || column.length > NAME_MAX))
    throw new UsageError(`--column takes a header of the file or a column number counted from 1 (got "${values.column ?? ''}")`);
  if (column !== undefined && /^\d+$/.test(column) && Number(column) < 1) throw new UsageError('--column numbers count from 1');

  const url = (values.url ?? env.VERIFY_API_URL ?? DEFAULT_URL).replace(/\/+$/, '');
  if (!/^https?:\/\/[^/\s]+/.test(url)) throw new UsageError(`--url must be an http:// or https:// URL (got "${url}")`);

  const key = values.key ?? env.VERIFY_API_KEY ?? '';
  if (key === '') throw new UsageError('no API key: set VERIFY_API_KEY (or pass --key)');

  const name = values.name ?? (input === undefined ? undefined : basename(input).slice(0, NAME_MAX));
  if (name !== undefined && (name.length === 0 || name.length > NAME_MAX)) throw new UsageError(`--name takes 1 to ${NAME_MAX} characters`);

  const interval = Number(values.interval ?? DEFAULT_INTERVAL_S);
  if (!Number.isFinite(interval) || interval < 0.1 || interval > 3600) throw new UsageError('--interval takes seconds, from 0.1 to 3600');

  const output = values.output ?? (input === undefined ? `${resume}.verified.csv` : verifiedPath(input));
  return {
    input,
    resume,
    url,
    urlFromFlag: values.url !== undefined,
    key,
    keyFromFlag: values.key !== undefined,
    name,
    callbackUrl: values['callback-url'],
    column,
    output,
    outputFromFlag: values.output !== undefined,
    intervalMs: Math.round(interval * 1000),
    finish: values.finish === true,
  };
}

/** A word as a POSIX shell reads it back: bare when it is safe, else single-quoted. */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The command that picks up list `id` where this run stopped (never with the key: it is not printed). */
export function resumeCommand(options: Options, id: string): string {
  const words = ['verify-list', '--resume', id];
  if (options.input !== undefined) words.push(options.input);
  if (options.urlFromFlag) words.push('--url', options.url);
  if (options.outputFromFlag) words.push('--output', options.output);
  return words.map(shellWord).join(' ');
}
