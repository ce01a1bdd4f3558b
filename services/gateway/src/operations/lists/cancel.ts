/**
 * Cancelling a list: entries not yet probed are never probed nor billed. The same service call
 * through both doors, so the same semantics; a list that already ended is answered as it is.
 */
import { listObjectSchema } from '@svc/contracts';
import { LIST_IDLE_EXAMPLE } from '../../openapi-examples.ts';
import { json, listNotFound, listReadResponses } from '../../openapi-schemas.ts';
import { BEARER_SECURITY } from '../../routes/guards.ts';
import { defineListOperation } from '../list-operation.ts';
import { LISTS_PATH, NOT_METERED, idParams } from './rest-parts.ts';
import { OPEN_WORLD, argumentError, idInput } from './tool-parts.ts';

const toolTitle = 'Cancel a list verification';

export const listCancel = defineListOperation({
  perform: ({ lists, key }, { id }: { id: string }) => lists.cancel(key.id, id),
  route: {
    method: 'DELETE',
    url: `${LISTS_PATH}/:id`,
    schema: {
      operationId: 'cancelList',
      tags: ['email-verify'],
      summary: 'Cancel a list',
      description:
        'Entries not yet probed are never probed nor billed; sessions under way are cut and their answers dropped. A list that ' +
        `already ended is answered as it is. With a \`callbackUrl\`, the list is POSTed to it with \`"event": "list.cancelled"\`. ${NOT_METERED}`,
      security: BEARER_SECURITY,
      params: idParams,
      response: {
        ...listReadResponses({
          description: 'The list, now `cancelled` (or as it ended).',
          content: json(listObjectSchema, { ...LIST_IDLE_EXAMPLE, status: 'cancelled', completedAt: '2026-11-23T10:04:00.000Z' }),
        }),
        ...listNotFound(),
      },
    },
  },
  tool: {
    name: 'email-verify_list-cancel',
    title: toolTitle,
    description:
      'Stop a list started with email-verify_list-create: entries not yet probed are never probed nor billed (what was ' +
      'processed stays billed and its results stay readable), and a `callbackUrl` receives the list with event list.cancelled. ' +
      'Returns the list object, now `cancelled`; a list that already ended is returned as it is, so calling again is harmless. Free.',
    annotations: { title: toolTitle, readOnlyHint: false, destructiveHint: true, idempotentHint: true, ...OPEN_WORLD },
    input: idInput,
    invalid: argumentError,
    output: listObjectSchema,
    read: (args) => args,
  },
});
