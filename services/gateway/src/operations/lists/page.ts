/** The key's lists, newest first, a page at a time (REST only). */
import { invalidParameter, listPageQuerySchema, listPageSchema } from '@svc/contracts';
import { decodeCursor } from '@svc/lists';
import { PARAMETER_MESSAGES } from '@svc/lists/service';
import { LIST_PAGE_ERRORS, LIST_PAGE_EXAMPLE } from '../../openapi-examples.ts';
import { json, listReadResponses, unmeteredBadRequest } from '../../openapi-schemas.ts';
import { validated } from '../../plugins/validation.ts';
import { BEARER_SECURITY } from '../../routes/guards.ts';
import { defineListOperation } from '../list-operation.ts';
import { LISTS_PATH, NOT_METERED, queryError } from './rest-parts.ts';

export const listPage = defineListOperation({
  perform: async ({ lists, key }, { limit, cursor }: { limit: number; cursor?: string | undefined }) => {
    if (cursor !== undefined && decodeCursor(cursor) === undefined) throw invalidParameter('cursor', PARAMETER_MESSAGES.cursor);
    return lists.page(key.id, limit, cursor);
  },
  route: {
    method: 'GET',
    url: LISTS_PATH,
    schema: {
      operationId: 'listLists',
      tags: ['email-verify'],
      summary: "The key's lists, newest first",
      description: `Pages of 1 to 100 lists (\`limit\`, default 20); pass \`nextCursor\` back as \`cursor\` for the next page. ${NOT_METERED}`,
      security: BEARER_SECURITY,
      querystring: validated(listPageQuerySchema, queryError),
      response: {
        ...listReadResponses({
          description: 'A page of lists and the cursor of the next (`null` after the last).',
          content: json(listPageSchema, LIST_PAGE_EXAMPLE),
        }),
        ...unmeteredBadRequest({
          description: '`limit` out of 1..100, a `cursor` that no page gave, or an unknown parameter.',
          examples: LIST_PAGE_ERRORS,
        }),
      },
    },
  },
});
