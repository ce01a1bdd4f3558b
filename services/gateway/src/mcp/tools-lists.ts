/**
 * The list tools of the email-verify tool server: create a list, follow its status, read its
 * results a page at a time (a tool answer cannot stream), cancel it. A door over
 * `@svc/lists/service`, as the REST routes are: arguments are read and refused by the package's
 * code, and answers are the REST bodies; what is MCP's (tool descriptions, the results page's
 * cursor, `_meta`) is here.
 */
import { Readable } from 'node:stream';
import {
  ApiError,
  OPERATIONS,
  formatUsd,
  listCreateToolSchema,
  listObjectSchema,
  notVerifiedResultSchema,
  verifyResultSchema,
  LIST_STATUSES,
  type ListCreateToolArguments,
} from '@svc/contracts';
import type { McpServer } from '@modelcontextprotocol/server';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { z } from 'zod';
import {
  PARAMETER_MESSAGES,
  jsonInput,
  listBodyError,
  parameterError,
  readCsvUpload,
  pendingOf,
  resultsPage,
  type NewListInput,
} from '@svc/lists/service';
import { logApiError, toApiError } from '../errors/api-errors.ts';
import { advertisedInput, parseArguments } from './advertised-schema.ts';
import { errorResult, textContent, type ToolContext } from './tool-result.ts';

const UNIT_PRICE = `$${formatUsd(OPERATIONS['email-verify.list'].priceMicroUsd)}`;
const RESULTS_PAGE_MAX = 500;

const statusInput = z.object({ id: z.string().min(1).describe('The list id returned by the create tool (`lst_...`).') }).strict();
const resultsInput = z
  .object({
    id: z.string().min(1).describe('The list id (`lst_...`).'),
    cursor: z
      .string()
      .regex(/^\d{1,6}$/)
      .optional()
      .describe('`nextCursor` of the previous page; omit for the first page.'),
    limit: z.number().int().min(1).max(RESULTS_PAGE_MAX).default(100).describe(`Results per page, 1 to ${RESULTS_PAGE_MAX} (default 100).`),
  })
  .strict();
const resultsOutput = z
  .object({
    id: z.string(),
    status: z.enum(LIST_STATUSES),
    count: z.number().int(),
    pending: z.number().int().describe('Entries not settled yet (left out of every page).'),
    results: z.array(
      z.union([
        verifyResultSchema.extend({ position: z.number().int().describe('Position of the entry in the list, from 0.') }),
        notVerifiedResultSchema.extend({ position: z.number().int() }),
      ]),
    ),
    nextCursor: z.string().nullable().describe('Pass it back for the next page; null after the last entry.'),
  })
  .strict();

const ANNOTATIONS = { openWorldHint: true } as const;

/** Seconds an agent waits before asking a list's status again: a list is a polling job, not a stream. */
export const STATUS_POLL_SECONDS = 10;

/** What the status tool says after the list object: when to ask again, or what to do now. */
function statusNote(list: Record<string, unknown>): string {
  const status = typeof list.status === 'string' ? list.status : 'unknown';
  if (status === 'queued' || status === 'running' || status === 'retrying')
    return (
      `The list is ${status}, not finished: call email-verify_list-status again in about ${STATUS_POLL_SECONDS} seconds ` +
      '(results settled so far can already be read with email-verify_list-results).'
    );
  return `The list is ${status}: nothing will change any more; read its results with email-verify_list-results.`;
}

/** The create tool's list: `emails`, or a CSV file's text read as an upload is (its `column` chosen the same way). */
async function createInput(args: ListCreateToolArguments): Promise<NewListInput> {
  const { emails, csv, column, name, callbackUrl } = args;
  if ((emails === undefined) === (csv === undefined))
    throw new ApiError('invalid_request', 'Give the list either as `emails` (an array of addresses) or as `csv` (a CSV file as text).');
  if (csv === undefined) return jsonInput({ emails: emails ?? [], name, callbackUrl });
  const upload = await readCsvUpload(Readable.from([Buffer.from(csv)]), { column: column === undefined ? undefined : String(column) });
  return { ...upload, name, callbackUrl };
}

/** Runs a list tool: these calls are never metered (creating costs nothing; units are billed as processed). */
async function answer(
  context: ToolContext,
  work: () => Promise<Record<string, unknown>>,
  meta?: Record<string, unknown>,
  note?: (structured: Record<string, unknown>) => string,
): Promise<CallToolResult> {
  try {
    const structured = await work();
    return {
      structuredContent: structured,
      content: [textContent(JSON.stringify(structured)), ...(note === undefined ? [] : [textContent(note(structured))])],
      ...(meta === undefined ? {} : { _meta: meta }),
    };
  } catch (error) {
    const apiError = toApiError(error, context.call.requestId);
    logApiError(context.log, error, apiError);
    return errorResult(apiError);
  }
}

/** The status and results tools' arguments, refused in their own terms (the REST query's limits differ). */
const argumentError = parameterError({
  id: 'id is required: the list id (`lst_...`) the create tool returned.',
  cursor: PARAMETER_MESSAGES.cursor,
  limit: `limit must be an integer from 1 to ${RESULTS_PAGE_MAX}.`,
});

export function registerListTools(server: McpServer, context: ToolContext): void {
  const createTitle = 'Verify a long list of email addresses (bulk job)';
  server.registerTool(
    OPERATIONS['email-verify.list'].tool,
    {
      title: createTitle,
      description:
        'Start verifying a list of email addresses too long for one batch (mailing lists, contact imports, CRM exports). ' +
        'Returns at once with the list object (`id`, `status` queued); follow it with email-verify_list-status and read results ' +
        `with email-verify_list-results. Duplicates are probed and billed once; greylisted addresses are retried over the next minutes. ` +
        `Costs nothing now: each started 100 processed distinct addresses costs ${UNIT_PRICE}. Optional \`name\` labels it; ` +
        '`callbackUrl` (https) receives the list object when it ends. Instead of `emails`, `csv` takes a CSV file as text ' +
        '(other columns kept); its address column is found by header or content, or named by `column` (a header, or a number from 1), ' +
        'and the list object says which (`column`).',
      inputSchema: advertisedInput(listCreateToolSchema),
      outputSchema: listObjectSchema,
      annotations: { title: createTitle, readOnlyHint: false, idempotentHint: false, ...ANNOTATIONS },
    },
    async (args) => {
      let freeRemaining = 0;
      const result = await answer(context, async () => {
        const body = parseArguments(listCreateToolSchema, args, (error) =>
          listBodyError(error, 'the tool takes `emails` (or `csv` and `column`), `name` and `callbackUrl`'),
        );
        const list = await context.lists.create(context.key, await createInput(body), context.log);
        freeRemaining = await context.lists.freeRemaining(context.key);
        context.announceFreeRemaining(freeRemaining);
        return list;
      });
      return result.isError === true ? result : { ...result, _meta: { costUsd: '0', freeRemaining } };
    },
  );

  const statusTitle = 'Status of a list verification';
  server.registerTool(
    'email-verify_list-status',
    {
      title: statusTitle,
      description:
        'The list object: status (queued, running, retrying while greylisted addresses wait, completed, cancelled, failed), ' +
        'how many entries are processed of `count`, the verdicts so far and the cost so far. Free.',
      inputSchema: advertisedInput(statusInput),
      outputSchema: listObjectSchema,
      annotations: { title: statusTitle, readOnlyHint: true, idempotentHint: true, ...ANNOTATIONS },
    },
    (args) =>
      answer(
        context,
        async () => {
          const { id } = parseArguments(statusInput, args, argumentError);
          return context.lists.object(await context.lists.get(context.key.id, id));
        },
        undefined,
        statusNote,
      ),
  );

  const resultsTitle = 'Results of a list verification, a page at a time';
  server.registerTool(
    'email-verify_list-results',
    {
      title: resultsTitle,
      description:
        'Results of a list in input order, one per settled entry with its `position` in the list, `limit` per page; pass ' +
        '`nextCursor` back for the next page. Entries not settled yet are left out and counted in `pending`. Free.',
      inputSchema: advertisedInput(resultsInput),
      outputSchema: resultsOutput,
      annotations: { title: resultsTitle, readOnlyHint: true, idempotentHint: true, ...ANNOTATIONS },
    },
    (args) =>
      answer(context, async () => {
        const { id, cursor, limit } = parseArguments(resultsInput, args, argumentError);
        const record = await context.lists.get(context.key.id, id);
        const page = await resultsPage(context.lists.store, record, cursor === undefined ? 0 : Number(cursor), limit);
        return {
          id: record.id,
          status: record.status,
          count: record.count,
          pending: pendingOf(record),
          results: page.results,
          nextCursor: page.next === null ? null : String(page.next),
        };
      }),
  );

  registerCancelTool(server, context);
}

/** `DELETE /v1/email-verify/lists/{id}` as a tool: the same service call, so the same semantics. */
function registerCancelTool(server: McpServer, context: ToolContext): void {
  const title = 'Cancel a list verification';
  server.registerTool(
    'email-verify_list-cancel',
    {
      title,
      description:
        'Stop a list started with email-verify_list-create: entries not yet probed are never probed nor billed (what was ' +
        'processed stays billed and its results stay readable), and a `callbackUrl` receives the list with event list.cancelled. ' +
        'Returns the list object, now `cancelled`; a list that already ended is returned as it is, so calling again is harmless. Free.',
      inputSchema: advertisedInput(statusInput),
      outputSchema: listObjectSchema,
      annotations: { title, readOnlyHint: false, destructiveHint: true, idempotentHint: true, ...ANNOTATIONS },
    },
    (args) =>
      answer(context, async () => {
        const { id } = parseArguments(statusInput, args, argumentError);
        return context.lists.cancel(context.key.id, id);
      }),
  );
}
