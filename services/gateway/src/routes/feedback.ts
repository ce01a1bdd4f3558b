/**
 * Learning from sends (docs/feedback.md): the feedback doors, which take what happened when the
 * key's mail was sent (the generic JSON body, or a sending service's own webhook body), and the
 * history of an address. Free, not metered; a limit of their own (RATE_LIMIT_EMAIL_VERIFY_FEEDBACK).
 * The webhooks authenticate as those services can: the key as an HTTP Basic password in the URL.
 */
import { ApiError, isApiError } from '@svc/contracts';
import type { Config } from '@svc/config';
import {
  SourceShapeError,
  confirmableUrl,
  feedbackRequestSchema,
  feedbackResponseSchema,
  mailgunSignatureOf,
  mailgunSignatureValid,
  parseSesMessage,
  readGenericEvents,
  readMailgun,
  readPostmark,
  readSendgrid,
  readSnsEnvelope,
  sendgridPublicKey,
  sendgridSignatureValid,
  type Feedback,
  type ReadEvents,
} from '@svc/feedback';
import { storeUnavailableError } from '@svc/jobs';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { parseBoundedJson } from '../json-body/bounded-json.ts';
import { feedbackResponses, historyResponses, json } from '../openapi-schemas.ts';
import { validated } from '../plugins/validation.ts';
import { BEARER_SECURITY, callerKey } from './guards.ts';

/** A webhook batch of SendGrid's can be large (up to about 1,000 events); 1 MiB holds it. */
const FEEDBACK_BODY_LIMIT = 1024 * 1024;
const SOURCES = ['sendgrid', 'mailgun', 'postmark', 'ses'] as const;
type Source = (typeof SOURCES)[number];
const SNS_CONFIRM_TIMEOUT_MS = 10_000;

const FEEDBACK_SECURITY: Array<Record<string, string[]>> = [{ bearerAuth: [] }, { basicAuth: [] }];
const FEEDBACK_EXAMPLE = {
  events: [
    { email: 'ann@example.com', outcome: 'hard_bounce', at: '2026-11-20T10:00:00Z', detail: '550 5.1.1 user unknown' },
    { email: 'bob@example.com', outcome: 'delivered' },
  ],
};

export const historyQuerySchema = z
  .object({
    email: z.string().min(1).max(1_024).describe('The address.'),
    before: z.iso
      .datetime({ offset: true })
      .optional()
      .describe('Paging: only entries older than this time (the `at` of the last entry of the previous page).'),
    limit: z.coerce.number().int().min(1).max(100).optional().describe('Entries per list, newest first (default 20).'),
  })
  .strict();

export const historyResponseSchema = z
  .object({
    email: z.string().describe('The address as asked.'),
    verifications: z
      .array(z.object({ at: z.string(), verdict: z.string(), reason: z.string(), score: z.number().int() }).strict())
      .describe("The key's verifications of the address, newest first (the last 20 are kept)."),
    events: z
      .array(z.object({ at: z.string(), outcome: z.string(), source: z.string() }).strict())
      .describe('Reported events of the address, newest first.'),
  })
  .strict();

const bodyError = (error: z.ZodError): ApiError =>
  new ApiError(
    'invalid_request',
    `The body must be { "events": [ { "email", "outcome", "at"?, "detail"? } ] } with 1 to 1,000 events: ${error.issues[0]?.message ?? 'invalid'}.`,
  );
const queryError = (error: z.ZodError): ApiError =>
  new ApiError(
    'invalid_parameter',
    `\`${String(error.issues[0]?.path[0] ?? 'email')}\` is missing or invalid: ${error.issues[0]?.message ?? ''}`,
  );

const badSignature = (source: string) =>
  new ApiError('unauthorized', `The ${source} webhook signature did not match: the body is refused (check the signing key configured).`);

/** Raw bodies of this plugin's requests, for the signatures computed over the bytes as sent. */
const rawBodies = new WeakMap<FastifyRequest, string>();

export const feedbackRoutes: FastifyPluginCallbackZod<{ feedback: Feedback; config: Config }> = (app, options, done) => {
  const { feedback, config } = options;
  const sendgridKey =
    config.FEEDBACK_SENDGRID_PUBLIC_KEY === undefined ? undefined : sendgridPublicKey(config.FEEDBACK_SENDGRID_PUBLIC_KEY);

  // JSON read here, keeping the text; SNS posts its JSON as text/plain.
  app.removeContentTypeParser('application/json');
  for (const type of ['application/json', 'text/plain']) {
    app.addContentTypeParser(type, { parseAs: 'string', bodyLimit: FEEDBACK_BODY_LIMIT }, (request, body, parsed) => {
      const text = typeof body === 'string' ? body : body.toString('utf8');
      rawBodies.set(request, text);
      try {
        // Bounded like every JSON body (json-body/bounded-json.ts): a nested or wide bomb is refused unbuilt.
        parsed(null, parseBoundedJson(text));
      } catch (error) {
        parsed(isApiError(error) ? error : new ApiError('invalid_request', 'The body is not valid JSON.'), undefined);
      }
    });
  }

  const record = async (keyId: string, read: ReadEvents) => {
    try {
      return await feedback.report(keyId, read.events, read.skipped);
    } catch (error) {
      throw storeUnavailableError('feedback store', error);
    }
  };

  const common = { auth: 'key', basicAuth: true, unmeteredLimit: 'email-verify.feedback' } as const;

  app.post(
    '/v1/email-verify/feedback',
    {
      config: common,
      bodyLimit: FEEDBACK_BODY_LIMIT,
      schema: {
        operationId: 'reportFeedback',
        tags: ['feedback'],
        summary: 'Report what happened when mail was sent (free)',
        description:
          'Hard bounces, soft bounces, deliveries and complaints of addresses the key sent to; later verifications by the key ' +
          'answer from them (`known_bounce`, `complainer`, `known_delivery`, `probability` of catch-all addresses). An event ' +
          'for a malformed address is ignored and counted. The key as Bearer or as the HTTP Basic password. Free, not metered.',
        security: FEEDBACK_SECURITY,
        body: validated(feedbackRequestSchema.meta({ examples: [FEEDBACK_EXAMPLE] }), bodyError),
        response: feedbackResponses(
          { description: 'How many events were recorded and ignored.', content: json(feedbackResponseSchema, { accepted: 2, ignored: 0 }) },
          {
            invalid_request: {
              error: 'invalid_request',
              message:
                'The body must be { "events": [ { "email", "outcome", "at"?, "detail"? } ] } with 1 to 1,000 events: Too small: expected array to have >=1 items.',
            },
          },
        ),
      },
    },
    async (request) => record(callerKey(request).id, readGenericEvents(request.body, Date.now())),
  );

  app.post(
    '/v1/email-verify/feedback/:source',
    {
      config: common,
      bodyLimit: FEEDBACK_BODY_LIMIT,
      schema: {
        operationId: 'reportFeedbackWebhook',
        tags: ['feedback'],
        summary: "A sending service's webhook (SendGrid, Mailgun, Postmark, Amazon SES via SNS)",
        description:
          'The native webhook body of the service: `sendgrid` (Event Webhook array; signed when FEEDBACK_SENDGRID_PUBLIC_KEY is set), ' +
          '`mailgun` (webhook `signature` and `event-data`; signed when FEEDBACK_MAILGUN_SIGNING_KEY is set), `postmark` (Bounce, ' +
          'Delivery and SpamComplaint webhooks), `ses` (SNS notifications of Bounce, Complaint and Delivery; a SubscriptionConfirmation ' +
          'is confirmed). Point the service at `https://any:<API_KEY>@<host>/v1/email-verify/feedback/<source>`. See docs/feedback.md.',
        security: FEEDBACK_SECURITY,
        params: validated(z.object({ source: z.string().describe('`sendgrid`, `mailgun`, `postmark` or `ses`.') }).strict(), queryError),
        response: feedbackResponses(
          { description: 'How many events were recorded and ignored.', content: json(feedbackResponseSchema, { accepted: 1, ignored: 0 }) },
          { invalid_request: { error: 'invalid_request', message: 'A SendGrid Event Webhook body is a JSON array of events.' } },
          { not_found: { error: 'not_found', message: 'No feedback source "sparkpost": use sendgrid, mailgun, postmark or ses.' } },
        ),
      },
    },
    async (request) => {
      const key = callerKey(request);
      const source = SOURCES.find((name) => name === request.params.source);
      if (source === undefined)
        throw new ApiError(
          'not_found',
          `No feedback source ${JSON.stringify(request.params.source.slice(0, 40))}: use sendgrid, mailgun, postmark or ses.`,
        );
      const now = Date.now();
      try {
        return await record(key.id, await readSource(source, request, now));
      } catch (error) {
        if (error instanceof SourceShapeError) throw new ApiError('invalid_request', error.message);
        throw error;
      }
    },
  );

  async function readSource(source: Source, request: FastifyRequest, now: number): Promise<ReadEvents> {
    const body = request.body;
    switch (source) {
      case 'sendgrid': {
        if (sendgridKey !== undefined) {
          const header = (name: string) => {
            const value = request.headers[name];
            return typeof value === 'string' ? value : undefined;
          };
          const valid = sendgridSignatureValid(
            sendgridKey,
            rawBodies.get(request) ?? '',
            header('x-twilio-email-event-webhook-signature'),
            header('x-twilio-email-event-webhook-timestamp'),
          );
          if (!valid) throw badSignature('SendGrid');
        }
        return readSendgrid(body, now);
      }
      case 'mailgun': {
        const signingKey = config.FEEDBACK_MAILGUN_SIGNING_KEY;
        if (signingKey !== undefined && !mailgunSignatureValid(signingKey, mailgunSignatureOf(body))) throw badSignature('Mailgun');
        return readMailgun(body, now);
      }
      case 'postmark':
        return readPostmark(body, now);
      case 'ses': {
        const envelope = readSnsEnvelope(body);
        if (envelope.type === 'SubscriptionConfirmation') {
          await confirmSubscription(envelope.subscribeUrl);
          return { events: [], skipped: 0 };
        }
        return envelope.type === 'Notification' ? parseSesMessage(envelope.message, now) : { events: [], skipped: 0 };
      }
    }
  }

  /** Visits the SubscribeURL SNS sent (its own HTTPS endpoints only), which confirms the subscription. */
  async function confirmSubscription(url: string): Promise<void> {
    const target = confirmableUrl(url, config.LIST_ALLOW_PRIVATE_CALLBACKS);
    if (target === undefined)
      throw new ApiError('invalid_request', 'The SubscribeURL is not an Amazon SNS endpoint (https://sns.<region>.amazonaws.com/...).');
    let response: Response;
    try {
      response = await fetch(target, { signal: AbortSignal.timeout(SNS_CONFIRM_TIMEOUT_MS), redirect: 'error' });
      await response.body?.cancel();
    } catch (error) {
      throw new ApiError('service_unavailable', 'The SNS subscription could not be confirmed now: SNS was not reached.', {
        cause: error,
        headers: { 'Retry-After': '60' },
      });
    }
    if (!response.ok) throw new ApiError('invalid_request', `SNS refused the subscription confirmation (HTTP ${response.status}).`);
  }

  app.get(
    '/v1/email-verify/history',
    {
      config: { auth: 'key' },
      schema: {
        operationId: 'getAddressHistory',
        tags: ['feedback'],
        summary: "An address's history for the key (not metered)",
        description:
          "The key's last verifications of the address and the events reported for it, each newest first, kept HISTORY_RETENTION_DAYS " +
          '(365 days). Page with `before` (the `at` of the oldest entry you have) and `limit`.',
        security: BEARER_SECURITY,
        querystring: validated(historyQuerySchema, queryError),
        response: historyResponses({
          description: 'The history; empty lists when nothing is known.',
          content: json(historyResponseSchema, {
            email: 'ann@example.com',
            verifications: [{ at: '2026-11-21T09:00:00.000Z', verdict: 'undeliverable', reason: 'known_bounce', score: 3 }],
            events: [{ at: '2026-11-20T10:00:00.000Z', outcome: 'hard_bounce', source: 'sendgrid' }],
          }),
        }),
      },
    },
    async (request) => {
      const key = callerKey(request);
      let history;
      try {
        history = await feedback.history(key.id, request.query.email);
      } catch (error) {
        throw storeUnavailableError('feedback store', error);
      }
      if (history === null) throw new ApiError('invalid_parameter', '`email` is not an address.');
      const before = request.query.before === undefined ? Infinity : Date.parse(request.query.before);
      const limit = request.query.limit ?? 20;
      const page = <T extends { at: string }>(entries: T[]) => entries.filter((entry) => Date.parse(entry.at) < before).slice(0, limit);
      return { email: history.email, verifications: page(history.verifications), events: page(history.events) };
    },
  );
  done();
};
