/**
 * A list's status: the list object (status, progress, verdicts and cost so far). A list is a
 * polling job, not a stream: the tool says after the object when to ask again.
 */
import { listObjectSchema } from '@svc/contracts';
import { LIST_OBJECT_EXAMPLE } from '../../openapi-examples.ts';
import { json, listNotFound, listReadResponses } from '../../openapi-schemas.ts';
import { BEARER_SECURITY } from '../../routes/guards.ts';
import { defineListOperation } from '../list-operation.ts';
import { LISTS_PATH, NOT_METERED, idParams } from './rest-parts.ts';
import { OPEN_WORLD, argumentError, idInput } from './tool-parts.ts';

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

const toolTitle = 'Status of a list verification';

export const listStatus = defineListOperation({
  perform: async ({ lists, key }, { id }: { id: string }) => lists.object(await lists.get(key.id, id)),
  route: {
    method: 'GET',
    url: `${LISTS_PATH}/:id`,
    schema: {
      operationId: 'getList',
      tags: ['email-verify'],
      summary: 'A list: status, progress, verdicts so far, cost so far',
      description: `\`processed\` never decreases; \`costUsd\` is what the list has cost so far. ${NOT_METERED}`,
      security: BEARER_SECURITY,
      params: idParams,
      response: {
        ...listReadResponses({ description: 'The list.', content: json(listObjectSchema, LIST_OBJECT_EXAMPLE) }),
        ...listNotFound(),
      },
    },
  },
  tool: {
    name: 'email-verify_list-status',
    title: toolTitle,
    description:
      'The list object: status (queued, running, retrying while greylisted addresses wait, completed, cancelled, failed), ' +
      'how many entries are processed of `count`, the verdicts so far and the cost so far. Free.',
    annotations: { title: toolTitle, readOnlyHint: true, idempotentHint: true, ...OPEN_WORLD },
    input: idInput,
    invalid: argumentError,
    output: listObjectSchema,
    read: (args) => args,
    note: statusNote,
  },
});
