/**
 * What the doors of lists (the REST routes and the MCP tools) take, read and refused alike: a
 * JSON list as upload rows, and the contract's refusals of a bad body, parameter or argument
 * (docs/lists.md, "Limits"). Each door keeps its transport's own wording of what it takes.
 */
import { ApiError, MAX_LIST_ADDRESSES, invalidParameter, type ListCreateBody } from '@svc/contracts';
import type { z } from 'zod';
import { tooManyAddresses } from './list-builder.ts';
import type { NewListInput } from './list-service.ts';

/** How a parameter of a list is refused, by its name; `limit` differs by door and is each door's own. */
export const PARAMETER_MESSAGES = {
  name: 'name must be a string of 1 to 200 characters.',
  callbackUrl: 'callbackUrl must be an https:// URL of at most 2048 characters.',
  column: 'column must be a header of the file or a column number counted from 1.',
  cursor: 'cursor must be the nextCursor of a previous page.',
  csv: 'csv must be the text of a CSV file.',
} as const;

/** A JSON list is a file of one column, `email`, written back with `,` and no byte-order mark. */
const JSON_LAYOUT = { columns: ['email'], addressColumn: 0, delimiter: ',', bom: false } as const;

/** A JSON list as upload rows. */
export function jsonInput(body: ListCreateBody): NewListInput {
  return {
    name: body.name,
    callbackUrl: body.callbackUrl,
    layout: { ...JSON_LAYOUT, columns: [...JSON_LAYOUT.columns] },
    rows: (function* () {
      for (const email of body.emails) yield [email];
    })(),
  };
}

/**
 * The refusal of a list body (or the create tool's arguments): over the limit is
 * `too_many_emails`; a bad name, callback, column or csv `invalid_parameter`; the rest
 * `invalid_request`. `takes` says what the door takes, for an unknown field.
 */
export function listBodyError(error: z.ZodError, takes = 'the body takes `emails`, `name` and `callbackUrl`'): ApiError {
  const issue = error.issues[0];
  const field = issue?.path[0];
  if (issue?.code === 'too_big' && field === 'emails' && issue.path.length === 1) return tooManyAddresses();
  if (field === 'name' || field === 'callbackUrl' || field === 'column' || field === 'csv')
    return invalidParameter(field, PARAMETER_MESSAGES[field]);
  if (issue?.code === 'unrecognized_keys')
    return new ApiError('invalid_request', `Unknown field ${issue.keys.map((key) => `\`${key}\``).join(', ')}; ${takes}.`);
  return new ApiError(
    'invalid_request',
    `The body must be a JSON object whose \`emails\` is an array of 1 to ${MAX_LIST_ADDRESSES} address strings.`,
    {
      details: { path: ['$', ...(issue?.path ?? []).map(String)].join('.') },
    },
  );
}

/**
 * A refusal of the first bad parameter, in `messages`' terms: a parameter the schema does not know
 * (perhaps one of another route) is unknown, not malformed. Shared by the list routes and tools.
 */
export const parameterError =
  (messages: Readonly<Record<string, string>>) =>
  (error: z.ZodError): ApiError => {
    const issue = error.issues[0];
    if (issue?.code === 'unrecognized_keys')
      return invalidParameter(issue.keys[0] ?? '?', `Unknown parameter \`${issue.keys[0] ?? '?'}\`.`);
    const param = String(issue?.path[0] ?? '?');
    return invalidParameter(param, messages[param] ?? `\`${param}\` is malformed.`);
  };
