/** Finishing a retrying list now: its waiting addresses settle `risky` and it completes (REST only). */
import { listObjectSchema } from '@svc/contracts';
import { LIST_IDLE_EXAMPLE } from '../../openapi-examples.ts';
import { json, listNotFound, listReadResponses } from '../../openapi-schemas.ts';
import { BEARER_SECURITY } from '../../routes/guards.ts';
import { defineListOperation } from '../list-operation.ts';
import { LISTS_PATH, NOT_METERED, idParams } from './rest-parts.ts';

export const listFinish = defineListOperation({
  perform: ({ lists, key }, { id }: { id: string }) => lists.finish(key.id, id),
  route: {
    method: 'POST',
    url: `${LISTS_PATH}/:id/finish`,
    schema: {
      operationId: 'finishList',
      tags: ['email-verify'],
      summary: 'Finish a retrying list now',
      description:
        'A list that is `retrying` (only greylisted or temporarily failed addresses wait for a retry) settles them now, each ' +
        '`risky` with the reason it was waiting for (`greylisted`, `timeout`, ...), and completes; its callback is sent as for ' +
        `any completed list. Any other list is answered as it is. Takes no body. ${NOT_METERED}`,
      security: BEARER_SECURITY,
      params: idParams,
      response: {
        ...listReadResponses({
          description: 'The list, now `completed` (or as it was, when it was not retrying).',
          content: json(listObjectSchema, {
            ...LIST_IDLE_EXAMPLE,
            name: null,
            status: 'completed',
            completedAt: '2026-11-23T10:04:00.000Z',
          }),
        }),
        ...listNotFound(),
      },
    },
  },
});
