/**
 * List verification's contract (docs/lists.md): the list object and its statuses, the request
 * shapes and the results. Its limits, billing unit and dedup key are in list-rules.ts (no zod).
 */
import { z } from 'zod';
import { MAX_LIST_ADDRESSES } from './list-rules.ts';
import { RESULT_FORMS } from './results-file.ts';
import { summarySchema, verifyResultSchema } from './verify.ts';

export const LIST_NAME_MAX = 200;

export const LIST_STATUSES = ['queued', 'running', 'retrying', 'completed', 'cancelled', 'failed'] as const;
export type ListStatus = (typeof LIST_STATUSES)[number];
/** Statuses a list never leaves. */
export const ENDED_STATUSES: readonly ListStatus[] = ['completed', 'cancelled', 'failed'];
export const isEnded = (status: ListStatus): boolean => ENDED_STATUSES.includes(status);

/** A list id: `lst_` and 24 hex digits. */
export const LIST_ID = /^lst_[0-9a-f]{24}$/;
/** LIST_ID without its anchors, to build the patterns that contain an id (a cursor, a Location, a Redis key). */
export const LIST_ID_PATTERN = LIST_ID.source.slice(1, -1);

const timestamp = z.string().describe('ISO 8601, UTC');

export const listObjectSchema = z
  .object({
    id: z.string().describe('`lst_` and 24 hex digits.'),
    name: z.string().nullable(),
    status: z.enum(LIST_STATUSES),
    count: z.number().int().describe('Entries submitted.'),
    distinct: z.number().int().describe('Distinct addresses among them (probed and billed once each).'),
    processed: z.number().int().describe('Entries settled so far; never decreases.'),
    summary: summarySchema.describe('Verdicts of the processed entries.'),
    costUsd: z.string().describe('What the list has cost so far, US dollars as in X-Service-Cost.'),
    createdAt: timestamp,
    startedAt: timestamp.nullable(),
    completedAt: timestamp.nullable().describe('When the list ended: completed, cancelled or failed.'),
    error: z.string().optional().describe('Why a failed list failed.'),
    column: z
      .object({
        index: z.number().int().min(1).describe('From 1, as `?column=` counts.'),
        header: z.string().nullable().describe('Its header as written; null when the file has no header row.'),
      })
      .strict()
      .optional()
      .describe('CSV uploads only: the column the addresses were read from.'),
    waiting: z
      .number()
      .int()
      .optional()
      .describe('While addresses wait for a retry (greylisting, timeouts): entries waiting. `finish` settles them now.'),
    waitingReasons: z
      .record(z.string(), z.number().int())
      .optional()
      .describe('The waiting entries by the reason they wait for (`greylisted`, `timeout`, `no_connect`, ...).'),
    nextRetryAt: timestamp.optional().describe('While entries wait: when the next retry is due.'),
    estimatedCompletionAt: timestamp
      .optional()
      .describe('While the list runs: when it should end, from its rate so far and its scheduled retries.'),
    encoding: z
      .string()
      .optional()
      .describe(
        'CSV uploads only: the encoding the file was read in: `utf-8`, `utf-16le`, `utf-16be`, `windows-1252` (or what a `charset` named).',
      ),
  })
  .strict();
export type ListObject = z.infer<typeof listObjectSchema>;

export const listPageSchema = z.object({ lists: z.array(listObjectSchema), nextCursor: z.string().nullable() }).strict();

const nameSchema = z.string().min(1).max(LIST_NAME_MAX).describe('Your label for the list.');
const callbackSchema = z.string().min(1).max(2048).describe('https:// URL the service POSTs the list object to when the list ends.');

/** JSON body of `POST /v1/email-verify/lists` and arguments of the create tool. */
export const listCreateBodySchema = z
  .object({
    emails: z
      .array(z.string())
      .min(1)
      .max(MAX_LIST_ADDRESSES)
      .describe(`Addresses to verify, 1 to ${MAX_LIST_ADDRESSES}; results come back in this order.`),
    name: nameSchema.optional(),
    callbackUrl: callbackSchema.optional(),
  })
  .strict();
export type ListCreateBody = z.infer<typeof listCreateBodySchema>;

const columnSchema = z
  .string()
  .min(1)
  .max(200)
  .describe('The address column: its header (any case) or its number, counted from 1. Without it, found by header, else by content.');

/** Query of the CSV upload (the JSON body carries these itself). */
export const listCreateQuerySchema = z
  .object({ name: nameSchema.optional(), callbackUrl: callbackSchema.optional(), column: columnSchema.optional() })
  .strict();

/** Arguments of the create tool: the JSON body's, or a CSV file's text and its address column instead of `emails`. */
export const listCreateToolSchema = listCreateBodySchema
  .extend({
    emails: listCreateBodySchema.shape.emails.optional(),
    csv: z.string().min(1).optional().describe('A CSV file as text (instead of `emails`): read as uploads are, other columns kept.'),
    column: z
      .union([columnSchema, z.number().int().min(1)])
      .optional()
      .describe('With `csv`: the address column, a header or a number from 1.'),
  })
  .strict();
export type ListCreateToolArguments = z.infer<typeof listCreateToolSchema>;

export const listPageQuerySchema = z
  .object({
    limit: z.coerce.number().int().min(1).max(100).default(20),
    cursor: z.string().min(1).max(200).optional(),
  })
  .strict();

export const listResultsQuerySchema = z
  .object({
    format: z.enum(['json', 'csv']).default('json'),
    columns: z
      .enum(RESULT_FORMS)
      .default('default')
      .describe(
        'CSV only: `full` appends action, flags, provider and probability after the four result columns (what the console and verify-list download).',
      ),
  })
  .strict();

/** An entry of a cancelled or failed list never probed: kept in the results, with no verdict. */
export const notVerifiedResultSchema = z
  .object({
    email: z.string().describe('The address exactly as submitted.'),
    verdict: z.null().describe('No verdict: the list ended before this address was verified.'),
    score: z.null(),
    reason: z.literal('not_verified'),
    checks: z.null(),
  })
  .strict();
/** A result of a list: the batch result, or `not_verified`. */
export const listEntryResultSchema = z.union([verifyResultSchema, notVerifiedResultSchema]);

/** JSON results: the batch result shape per entry, in input order, settled entries only (and not_verified ones of a list that ended). */
export const listResultsSchema = z
  .object({
    id: z.string(),
    status: z.enum(LIST_STATUSES),
    count: z.number().int(),
    pending: z.number().int().describe('Entries not settled yet, left out of `results` (0 once a list was cancelled or failed).'),
    results: z.array(listEntryResultSchema),
  })
  .strict();
