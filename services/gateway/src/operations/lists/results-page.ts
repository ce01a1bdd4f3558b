/**
 * A list's results a page at a time, for the tool (a tool answer cannot stream): settled entries
 * in input order with their position, `limit` per page, and the cursor of the next page.
 */
import { LIST_STATUSES, notVerifiedResultSchema, verifyResultSchema } from '@svc/contracts';
import { pendingOf, resultsPage } from '@svc/lists/service';
import { z } from 'zod';
import { defineListOperation } from '../list-operation.ts';
import { OPEN_WORLD, RESULTS_PAGE_MAX, argumentError } from './tool-parts.ts';

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

type ResultsPageInput = z.output<typeof resultsInput>;

const toolTitle = 'Results of a list verification, a page at a time';

export const listResultsPage = defineListOperation({
  perform: async ({ lists, key }, { id, cursor, limit }: ResultsPageInput) => {
    const record = await lists.get(key.id, id);
    const page = await resultsPage(lists.store, record, cursor === undefined ? 0 : Number(cursor), limit);
    return {
      id: record.id,
      status: record.status,
      count: record.count,
      pending: pendingOf(record),
      results: page.results,
      nextCursor: page.next === null ? null : String(page.next),
    };
  },
  tool: {
    name: 'email-verify_list-results',
    title: toolTitle,
    description:
      'Results of a list in input order, one per settled entry with its `position` in the list, `limit` per page; pass ' +
      '`nextCursor` back for the next page. Entries not settled yet are left out and counted in `pending`. Free.',
    annotations: { title: toolTitle, readOnlyHint: true, idempotentHint: true, ...OPEN_WORLD },
    input: resultsInput,
    invalid: argumentError,
    output: resultsOutput,
    read: (args) => args,
  },
});
