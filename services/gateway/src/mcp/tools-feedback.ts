/**
 * `email-verify_feedback`: the generic feedback door as a tool (docs/feedback.md). The arguments
 * are the REST body; the answer is the REST body `{ accepted, ignored }`. Free, never metered; its
 * calls draw on the REST doors' budget (RATE_LIMIT_EMAIL_VERIFY_FEEDBACK), which the rate-limit
 * plugin applies to a tool server POST that calls this tool, by its name.
 */
import { ApiError } from '@svc/contracts';
import { feedbackRequestSchema, feedbackResponseSchema, readGenericEvents } from '@svc/feedback';
import type { CallToolResult, McpServer } from '@modelcontextprotocol/server';
import { toApiError } from '../errors/api-errors.ts';
import { storeUnavailableError } from '@svc/jobs';
import { advertisedInput, parseArguments } from './advertised-schema.ts';
import { errorResult, textContent, type ToolContext } from './tool-result.ts';

export const FEEDBACK_TOOL = 'email-verify_feedback';

export function registerFeedbackTool(server: McpServer, context: ToolContext): void {
  const feedback = context.feedback;
  if (feedback === undefined) return;
  const title = 'Report what happened when mail was sent';
  server.registerTool(
    FEEDBACK_TOOL,
    {
      title,
      description:
        'Tell the service which addresses bounced, received mail or complained when the user sent mail to them: `events` ' +
        '(1 to 1,000) of `{ "email", "outcome": "hard_bounce" | "soft_bounce" | "delivered" | "complaint", "at"?: ISO 8601 }`. ' +
        'Later verifications by this key answer from them: a hard-bounced address is `undeliverable`/`known_bounce` without a probe, ' +
        'a complainer `risky`/`complainer`, a delivered catch-all address `deliverable`/`known_delivery`, and catch-all addresses get ' +
        "a `probability` from the domain's reported sends. Returns `{ accepted, ignored }` (malformed addresses are ignored). Free.",
      inputSchema: advertisedInput(feedbackRequestSchema),
      outputSchema: feedbackResponseSchema,
      annotations: { title, readOnlyHint: false, idempotentHint: false, openWorldHint: false },
    },
    async (args): Promise<CallToolResult> => {
      try {
        const body = parseArguments(
          feedbackRequestSchema,
          args,
          (error) =>
            new ApiError(
              'invalid_request',
              `The tool takes { "events": [ { "email", "outcome", "at"? } ] }, 1 to 1,000 events: ${error.issues[0]?.message ?? 'invalid'}.`,
            ),
        );
        const read = readGenericEvents(body, Date.now(), 'tool');
        const answer = await feedback.report(context.key.id, read.events, read.skipped).catch((error: unknown) => {
          throw storeUnavailableError('feedback store', error);
        });
        return { structuredContent: answer, content: [textContent(JSON.stringify(answer))] };
      } catch (error) {
        const apiError = toApiError(error, context.call.requestId);
        context.logError(error, apiError);
        return errorResult(apiError);
      }
    },
  );
}
