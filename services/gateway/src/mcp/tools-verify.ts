/**
 * The email-verify tool server: the batch and single verify operations as tools. Arguments are
 * the REST body and query as JSON; the operations (operations/verify-*.ts) validate them and
 * answer the REST bodies, which are the structured results, so both doors answer alike.
 */
import { MAX_BATCH, OPERATIONS, formatUsd, batchResponseSchema, verifyResultSchema, type OperationId } from '@svc/contracts';
import type { McpServer } from '@modelcontextprotocol/server';
import { verifyBatch } from '../operations/verify-batch.ts';
import { verifySingle } from '../operations/verify-single.ts';
import { advertisedInput } from './advertised-schema.ts';
import { operationTool } from './operation-tool.ts';
import { textContent, type ToolContext, type ToolOutput } from './tool-result.ts';

const BATCH_INPUT = advertisedInput(verifyBatch.input.advertised);
const SINGLE_INPUT = advertisedInput(verifySingle.input.advertised);

/** A verify answer as the tool gives it: the REST body, structured and as JSON text. */
const asJson = (body: Record<string, unknown>): ToolOutput => ({ structured: body, content: [textContent(JSON.stringify(body))] });

const WHAT_IS_CHECKED =
  'Checks syntax, the domain and its mail servers (MX), asks the mail server whether the mailbox exists (SMTP, nothing is sent), ' +
  'and detects catch-all domains, disposable providers, role accounts (info@, sales@), free providers and likely typos (didYouMean). ' +
  'Each result has a verdict (deliverable | risky | undeliverable), a score 0-100, one reason code and the individual checks. ' +
  '"undeliverable" is only given on proof; anything uncertain (catch-all, timeouts, greylisting) is "risky".';

const price = (operation: OperationId): string => `$${formatUsd(OPERATIONS[operation].priceMicroUsd)}`;

const ANNOTATIONS = { readOnlyHint: true, idempotentHint: true, openWorldHint: true } as const;

export const VERIFY_SERVER_INSTRUCTIONS =
  `Email address verification. Use ${OPERATIONS['email-verify.batch'].tool} for lists (up to ${MAX_BATCH} addresses per call) ` +
  `and ${OPERATIONS['email-verify.single'].tool} for one or a few addresses.`;

export function registerVerifyTools(server: McpServer, context: ToolContext): void {
  const batchTitle = 'Verify a list of email addresses';
  server.registerTool(
    OPERATIONS['email-verify.batch'].tool,
    {
      title: batchTitle,
      description:
        `Verify 1 to ${MAX_BATCH} email addresses in one call, for lists: cleaning a mailing list, validating a contact import, ` +
        `auditing CRM records. ${WHAT_IS_CHECKED} Returns one result per address in input order plus a summary count per verdict. ` +
        `One call costs the same whatever the count (${price('email-verify.batch')}), so send up to ${MAX_BATCH} addresses per call; split longer lists. ` +
        `For one or a few addresses use ${OPERATIONS['email-verify.single'].tool} instead.`,
      inputSchema: BATCH_INPUT,
      outputSchema: batchResponseSchema,
      annotations: { title: batchTitle, ...ANNOTATIONS },
    },
    operationTool(context, verifyBatch, asJson),
  );

  const singleTitle = 'Verify one email address';
  server.registerTool(
    OPERATIONS['email-verify.single'].tool,
    {
      title: singleTitle,
      description:
        `Verify a single email address, e.g. one typed into a sign-up form or one contact to check (${price('email-verify.single')} per call). ${WHAT_IS_CHECKED} ` +
        `For more than a few addresses (lists, imports, CRM audits) use ${OPERATIONS['email-verify.batch'].tool}, ` +
        `which takes up to ${MAX_BATCH} addresses per call.`,
      inputSchema: SINGLE_INPUT,
      outputSchema: verifyResultSchema,
      annotations: { title: singleTitle, ...ANNOTATIONS },
    },
    operationTool(context, verifySingle, asJson),
  );
}
