/**
 * `email-verify.list`: start verifying a list. REST takes it as JSON, a CSV file or a workbook
 * (read by the route as a stream); the tool takes `emails` or a CSV file as text, read as an
 * upload is. Both answer the list object at once (`queued`); the call is metered (rate limited)
 * and costs 0: each started 100 processed distinct addresses is billed as workers process them.
 * The tool reports the rows stored as progress when its client asks, and a call cancelled or
 * dropped while its rows are read creates no list (one dropped while it is stored is cancelled).
 */
import { Readable } from 'node:stream';
import {
  ApiError,
  LIST_BODY_LIMIT_BYTES,
  MAX_LIST_ADDRESSES,
  OPERATIONS,
  formatUsd,
  listCreateQuerySchema,
  listCreateToolSchema,
  listObjectSchema,
  type ListCreateToolArguments,
} from '@svc/contracts';
import { CallerGoneError } from '@svc/jobs';
import { jsonInput, listBodyError, readCsvUpload, type NewListInput } from '@svc/lists/service';
import { LIST_CREATED_EXAMPLE, LIST_CREATE_ERRORS } from '../../openapi-examples.ts';
import { json, listCreateResponses } from '../../openapi-schemas.ts';
import { validated } from '../../plugins/validation.ts';
import { BEARER_SECURITY } from '../../routes/guards.ts';
import { defineListOperation, type ReadFollow } from '../list-operation.ts';
import { LISTS_PATH, queryError } from './rest-parts.ts';
import { OPEN_WORLD } from './tool-parts.ts';
import { uploadBody } from './upload-body.ts';

const UNIT_PRICE = `$${formatUsd(OPERATIONS['email-verify.list'].priceMicroUsd)}`;

/** The CSV text fed to the reader a piece at a time, as an upload arrives: not parsed in one block of the event loop. */
const CSV_PIECE_BYTES = 64 * 1024;

function* pieces(bytes: Buffer): Generator<Buffer> {
  for (let start = 0; start < bytes.length; start += CSV_PIECE_BYTES) yield bytes.subarray(start, start + CSV_PIECE_BYTES);
}

/**
 * The rows a CSV text holds at most, for progress: its lines that are not blank, the header
 * excluded. A quoted field across lines or a `sep=` line makes it more than the rows read; the
 * last notification then says done all the same.
 */
export function csvRowsAtMost(csv: string, headerRow: boolean | undefined): number {
  let lines = 0;
  let blank = true;
  for (let at = 0; at < csv.length; at += 1) {
    const code = csv.charCodeAt(at);
    const lineEnd = code === 0x0a || code === 0x0d;
    if (lineEnd && !blank) lines += 1;
    blank = lineEnd;
  }
  if (!blank) lines += 1;
  return Math.max(1, lines - (headerRow === false ? 0 : 1));
}

/**
 * The rows as the list service reads them, watched: each row taken says how many were stored
 * before it (the service takes the next once it stored one), and a caller gone stops the reading,
 * so that the service discards what it staged and no list is created.
 */
async function* followed(rows: AsyncIterable<string[]> | Iterable<string[]>, total: number, follow: ReadFollow): AsyncGenerator<string[]> {
  let stored = 0;
  for await (const row of rows) {
    if (follow.callerGone.aborted) throw new CallerGoneError();
    follow.onProgress?.(stored, total);
    stored += 1;
    yield row;
  }
  if (follow.callerGone.aborted) throw new CallerGoneError();
}

/** The create tool's list: `emails`, or a CSV file's text read as an upload is (its `column` chosen the same way). */
async function toolInput(args: ListCreateToolArguments, follow: ReadFollow): Promise<NewListInput> {
  const { emails, csv, column, name, callbackUrl } = args;
  if ((emails === undefined) === (csv === undefined))
    throw new ApiError('invalid_request', 'Give the list either as `emails` (an array of addresses) or as `csv` (a CSV file as text).');
  if (csv === undefined) {
    const input = jsonInput({ emails: emails ?? [], name, callbackUrl });
    return { ...input, rows: followed(input.rows, emails?.length ?? 0, follow) };
  }
  const upload = await readCsvUpload(Readable.from(pieces(Buffer.from(csv))), {
    column: column === undefined ? undefined : String(column),
  });
  return { ...upload, rows: followed(upload.rows, csvRowsAtMost(csv, upload.layout.headerRow), follow), name, callbackUrl };
}

const toolTitle = 'Verify a long list of email addresses (bulk job)';

export const listCreate = defineListOperation({
  metering: { id: 'email-verify.list', freeRemaining: ({ lists, key }) => lists.freeRemaining(key) },
  perform: async ({ lists, key, log, callerGone }, input: NewListInput) => {
    const list = await lists.create(key, input, log);
    // The caller left once the rows were read, while the list was stored: nobody follows it, so
    // it ends now, before workers process (and bill) its addresses.
    if (callerGone?.aborted === true) {
      await lists.cancel(key.id, list.id);
      throw new CallerGoneError();
    }
    return list;
  },
  route: {
    method: 'POST',
    url: LISTS_PATH,
    upload: { bodyLimit: LIST_BODY_LIMIT_BYTES },
    schema: {
      operationId: 'createList',
      tags: ['email-verify'],
      summary: 'Verify a list (bulk job)',
      description:
        `Takes 1 to ${MAX_LIST_ADDRESSES} addresses as JSON \`{ "emails": [...], "name"?, "callbackUrl"? }\` or as a CSV file ` +
        'or an Excel workbook (its first sheet; `name`, `callbackUrl` and `column` then as query parameters), up to 16 MiB, and answers 202 with the list object at once. Poll ' +
        'the list, read its results as it goes, or give a `callbackUrl`: the service POSTs the list, signed, when it ends. ' +
        'Costs nothing now: each started 100 processed distinct addresses costs one batch ($0.15), drawing on the batch free ' +
        'allowance first. Duplicates are probed and billed once; greylisted addresses are retried for minutes before they settle.',
      security: BEARER_SECURITY,
      querystring: validated(listCreateQuerySchema, queryError),
      body: uploadBody,
      response: listCreateResponses(
        {
          description: 'The list, `queued`; `Location` says where to poll it. `X-Service-Cost` is 0.',
          content: json(listObjectSchema, LIST_CREATED_EXAMPLE),
        },
        {
          description:
            'The body is not `{ "emails": [...] }` with 1 to 100000 strings or not readable CSV (bytes that are not text or ' +
            'not the encoding, named by line and byte in `details`), has no address column, or holds no address ' +
            '(`invalid_request`); more than 100000 entries (`too_many_emails`); or `name`/`callbackUrl`/`column` is refused ' +
            '(`invalid_parameter`, `details.param` names it).',
          examples: LIST_CREATE_ERRORS,
        },
      ),
    },
  },
  tool: {
    name: OPERATIONS['email-verify.list'].tool,
    title: toolTitle,
    description:
      'Start verifying a list of email addresses too long for one batch (mailing lists, contact imports, CRM exports). ' +
      'Returns at once with the list object (`id`, `status` queued); follow it with email-verify_list-status and read results ' +
      `with email-verify_list-results. Duplicates are probed and billed once; greylisted addresses are retried over the next minutes. ` +
      `Costs nothing now: each started 100 processed distinct addresses costs ${UNIT_PRICE}. Optional \`name\` labels it; ` +
      '`callbackUrl` (https) receives the list object when it ends. Instead of `emails`, `csv` takes a CSV file as text ' +
      '(other columns kept); its address column is found by header or content, or named by `column` (a header, or a number from 1), ' +
      'and the list object says which (`column`).',
    annotations: { title: toolTitle, readOnlyHint: false, idempotentHint: false, ...OPEN_WORLD },
    input: listCreateToolSchema,
    invalid: (error) => listBodyError(error, 'the tool takes `emails` (or `csv` and `column`), `name` and `callbackUrl`'),
    output: listObjectSchema,
    read: toolInput,
    progress: (done, total) => `${done} of ${total} rows read and stored`,
  },
});
