/**
 * A feedback event: what a sending service said happened to one address. Every door (the generic
 * JSON body, each service's webhook body, the console's CSV, the tool) turns its input into these.
 */
import { domainToASCII } from 'node:url';
import { z } from 'zod';

export const OUTCOMES = ['hard_bounce', 'soft_bounce', 'delivered', 'complaint'] as const;
export type Outcome = (typeof OUTCOMES)[number];

export const SOURCES = ['api', 'sendgrid', 'mailgun', 'postmark', 'ses', 'console', 'tool'] as const;
export type FeedbackSource = (typeof SOURCES)[number];

/** One event as a door read it: the address as sent (normalised later), its time in epoch ms. */
export interface FeedbackEvent {
  email: string;
  outcome: Outcome;
  /** Epoch milliseconds; the time of receipt when the source gave none. */
  at: number;
  source: FeedbackSource;
}

/** What a door read from its body: the events, and how many of its entries it had to leave out. */
export interface ReadEvents {
  events: FeedbackEvent[];
  /** Entries that were not a usable event (an event type that teaches nothing, no address). */
  skipped: number;
}

export const MAX_EVENTS = 1_000;

/** `POST /v1/email-verify/feedback`'s body (decisions, "Learning from sends"). */
export const feedbackRequestSchema = z
  .object({
    events: z
      .array(
        z
          .object({
            email: z.string().max(1_024).describe('The address the mail was sent to.'),
            outcome: z.enum(OUTCOMES).describe('What happened: `hard_bounce`, `soft_bounce`, `delivered` or `complaint`.'),
            at: z.iso.datetime({ offset: true }).optional().describe('When it happened (ISO 8601); the time of receipt when absent.'),
            detail: z.string().max(1_000).optional().describe("The sending service's own words (a bounce's diagnostic); not stored."),
          })
          .strict(),
      )
      .min(1)
      .max(MAX_EVENTS)
      .describe(`1 to ${MAX_EVENTS} events.`),
  })
  .strict();
export type FeedbackRequest = z.infer<typeof feedbackRequestSchema>;

export const feedbackResponseSchema = z
  .object({
    accepted: z.number().int().min(0).describe('Events recorded.'),
    ignored: z.number().int().min(0).describe('Events left out: a malformed address, or an event type that says nothing of delivery.'),
  })
  .strict();
export type FeedbackResponse = z.infer<typeof feedbackResponseSchema>;

/** Epoch ms of an ISO 8601 time, or `fallback` when absent or unreadable. */
export function timeOf(value: unknown, fallback: number): number {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value !== 'string') return fallback;
  const parsed = Date.parse(value);
  return Number.isFinite(parsed) ? parsed : fallback;
}

/** The generic body's events, dated `now` when they carry no time. */
export function readGenericEvents(body: FeedbackRequest, now: number, source: FeedbackSource = 'api'): ReadEvents {
  return {
    events: body.events.map((event) => ({ email: event.email, outcome: event.outcome, at: timeOf(event.at, now), source })),
    skipped: 0,
  };
}

const LOCAL = /^[^\s@<>()[\]\\,;:"]{1,64}$/;
/** C0 controls and DEL, which no mailbox name holds. */
const hasControl = (text: string): boolean => [...text].some((char) => char.charCodeAt(0) < 0x20 || char.charCodeAt(0) === 0x7f);
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * The form an address is hashed under, or null when it is not an address. Lower-cased whole:
 * mailbox names are case-insensitive at practically every provider, and the sending services
 * report an address in whatever case the sender wrote it, so a bounce of `Ann@x.com` must find
 * a later verification of `ann@x.com`. The domain in A-labels (IDNA), as the verifier reads it.
 */
export function normaliseAddress(input: string): string | null {
  const trimmed = input.trim();
  // A display-name form (`Ann <ann@x.com>`), as some services echo the header.
  const angle = /<([^<>]+)>$/.exec(trimmed);
  const address = angle?.[1] ?? trimmed;
  if (address.length > 254) return null;
  const at = address.lastIndexOf('@');
  if (at <= 0) return null;
  const local = address.slice(0, at).toLowerCase();
  const domain = domainToASCII(address.slice(at + 1).replace(/\.$/, '')).toLowerCase();
  if (!LOCAL.test(local) || hasControl(local) || domain === '' || domain.length > 253) return null;
  const labels = domain.split('.');
  if (labels.length < 2 || !labels.every((label) => LABEL.test(label))) return null;
  return `${local}@${domain}`;
}

/** The domain of a normalised address. */
export const domainOf = (normalised: string): string => normalised.slice(normalised.lastIndexOf('@') + 1);
