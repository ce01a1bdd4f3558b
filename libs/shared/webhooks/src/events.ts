/**
 * What a callback is: one event about one list, addressed to the URL its owner gave, with the
 * exact body to send. The body is built by the lists code and signed byte for byte as it is.
 */
import { z } from 'zod';

export const LIST_EVENT_TYPES = ['list.completed', 'list.cancelled', 'list.failed'] as const;
export type ListEventType = (typeof LIST_EVENT_TYPES)[number];

export interface CallbackEvent {
  /** Unique per event, sent as X-Event-Id on every attempt; receivers deduplicate by it. */
  id: string;
  type: ListEventType;
  /** Public id of the API key that owns the list: its webhook secret signs the event. */
  keyId: string;
  /** The list's callbackUrl, already accepted by checkCallbackUrl at creation. */
  url: string;
  /** The exact JSON body to POST. */
  body: string;
}

/** A list object is a few hundred bytes: anything near this bound is a bug, not a list. */
export const MAX_BODY_BYTES = 64 * 1024;
export const MAX_URL_LENGTH = 2048;

/** Events cross Redis: they are checked on the way in and again when a worker reads them. */
export const callbackEventSchema = z.object({
  // It is also the BullMQ job id, which may be neither an integer nor contain ':'.
  id: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,128}$/, 'event id: 1 to 128 of A-Z a-z 0-9 _ . -')
    .refine((id) => !/^\d+$/.test(id), 'event id: not only digits'),
  type: z.enum(LIST_EVENT_TYPES),
  keyId: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/),
  url: z.string().min(1).max(MAX_URL_LENGTH),
  body: z.string().refine((body) => Buffer.byteLength(body, 'utf8') <= MAX_BODY_BYTES, `body over ${MAX_BODY_BYTES} bytes`),
}) satisfies z.ZodType<CallbackEvent>;
