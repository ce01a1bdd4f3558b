/**
 * A list's results, downloaded: one result per settled entry in input order, streamed as JSON or
 * as the uploaded CSV with the result columns appended (REST; a tool reads them a page at a
 * time instead, results-page.ts). The answer is the download: its body is made as it is sent.
 */
import {
  FULL_RESULT_COLUMNS,
  RESULT_COLUMNS,
  listResultsQuerySchema,
  listResultsSchema,
  type ListStatus,
  type ResultForm,
} from '@svc/contracts';
import { csvResults, jsonResults, pendingOf } from '@svc/lists/service';
import { LIST_RESULTS_CSV_EXAMPLE, LIST_RESULTS_ERRORS, LIST_RESULTS_EXAMPLE } from '../../openapi-examples.ts';
import { csvStreamSchema, listNotFound, listReadResponses, unmeteredBadRequest } from '../../openapi-schemas.ts';
import { validated } from '../../plugins/validation.ts';
import { BEARER_SECURITY } from '../../routes/guards.ts';
import { defineListOperation } from '../list-operation.ts';
import { LISTS_PATH, NOT_METERED, idParams, queryError } from './rest-parts.ts';

const csvResultsBody = csvStreamSchema(
  `The uploaded file (a JSON list: one \`email\` column) with ${RESULT_COLUMNS.join(', ')} appended (\`columns=full\`: ` +
    `${FULL_RESULT_COLUMNS.join(', ')}), in the upload's separator, after a UTF-8 byte-order mark; settled entries only, in input ` +
    "order. A cell starting with `=`, `+`, `-`, `@`, a tab or a carriage return is written with a leading `'` so that a " +
    'spreadsheet shows it as text instead of running it.',
);

export interface ResultsInput {
  id: string;
  format: 'json' | 'csv';
  columns: ResultForm;
}

/** The results as a download: the list's state when it was asked, and the body made as it is read. */
export interface ResultsDownload {
  id: string;
  status: ListStatus;
  pending: number;
  format: 'json' | 'csv';
  body: AsyncIterable<string>;
}

export const listResults = defineListOperation({
  perform: async ({ lists, key }, { id, format, columns }: ResultsInput): Promise<ResultsDownload> => {
    const record = await lists.get(key.id, id);
    const body = format === 'csv' ? csvResults(lists.store, record, columns) : jsonResults(lists.store, record);
    return { id: record.id, status: record.status, pending: pendingOf(record), format, body };
  },
  route: {
    method: 'GET',
    url: `${LISTS_PATH}/:id/results`,
    schema: {
      operationId: 'getListResults',
      tags: ['email-verify'],
      summary: "A list's results in input order, as JSON or CSV",
      description:
        'One result per settled entry, in input order, streamed; entries not settled yet are left out and counted in `pending` ' +
        `(and \`X-List-Pending\`), so results may be read while the list runs. \`format=csv\` answers the uploaded file with ` +
        `${RESULT_COLUMNS.join(', ')} appended; \`columns=full\` also appends action (keep, review, remove), flags (role, free, ` +
        'disposable, catch_all, duplicate), provider and probability. Every CSV starts with a UTF-8 byte-order mark, and cells a ' +
        `spreadsheet would run as formulas are written with a leading \`'\`. ${NOT_METERED}`,
      security: BEARER_SECURITY,
      params: idParams,
      querystring: validated(listResultsQuerySchema, queryError),
      response: {
        ...listReadResponses({
          description: 'The results settled so far: JSON (`format=json`, the default) or the CSV file (`format=csv`).',
          headers: ['X-List-Status', 'X-List-Pending', 'Content-Disposition'],
          content: {
            'application/json': { schema: listResultsSchema, example: LIST_RESULTS_EXAMPLE },
            'text/csv': { schema: csvResultsBody, example: LIST_RESULTS_CSV_EXAMPLE },
          },
        }),
        ...unmeteredBadRequest({
          description: '`format` is neither `json` nor `csv`, `columns` neither `default` nor `full`, or an unknown parameter.',
          examples: LIST_RESULTS_ERRORS,
        }),
        ...listNotFound(),
      },
    },
  },
});
