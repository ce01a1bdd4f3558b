/**
 * The list operations' tool door on the email-verify tool server: create a list, follow its
 * status, read its results a page at a time (a tool answer cannot stream), cancel it. Each tool's
 * name, words, schemas and call are its operation's (operations/lists/*.ts), as each route's are;
 * what is MCP's is here: the advertised schema, the answer as structured content and JSON text
 * (with the operation's note), `_meta` and the contract's error as an `isError` result.
 */
import type { CallToolResult, McpServer, ServerContext } from '@modelcontextprotocol/server';
import { CallerGoneError } from '@svc/jobs';
import type { FastifySchema } from 'fastify';
import { toApiError } from '../errors/api-errors.ts';
import { freeRemainingAfter, type ListCall, type ListOperation } from '../operations/list-operation.ts';
import { listCancel } from '../operations/lists/cancel.ts';
import { listCreate } from '../operations/lists/create.ts';
import { listResultsPage } from '../operations/lists/results-page.ts';
import { listStatus } from '../operations/lists/status.ts';
import { advertisedInput, parseArguments } from './advertised-schema.ts';
import { progressReporter, throttled } from './progress.ts';
import { errorResult, textContent, type ToolContext } from './tool-result.ts';

/**
 * Runs a list tool. These calls are never charged: creating a list costs nothing now (units are
 * billed as processed), so a metered one says only what the key has left, in `_meta` and on the
 * HTTP response; reading and cancelling are free and carry no `_meta`. A tool that reports
 * progress (creating a list) does so throttled, when its client gave a progressToken: the first
 * report at once, then about four a second, the end before the answer.
 */
async function runListTool<I, A extends Record<string, unknown>, S extends FastifySchema, T>(
  context: ToolContext,
  operation: ListOperation<I, A, S, T>,
  args: unknown,
  ctx: ServerContext | undefined,
): Promise<CallToolResult> {
  const { tool } = operation;
  if (tool === undefined) throw new Error('a list operation without a tool was given to the tool door');
  const { callerGone } = context.call;
  const call: ListCall = { lists: context.lists, key: context.key, log: context.log, callerGone };
  const reporter = tool.progress === undefined ? undefined : progressReporter(ctx, tool.progress);
  const progress = reporter === undefined ? undefined : throttled(reporter);
  try {
    const input = await tool.read(parseArguments(tool.input, args, tool.invalid), {
      callerGone,
      ...(progress === undefined ? {} : { onProgress: progress.report }),
    });
    const structured = await operation.perform(call, input);
    progress?.finish();
    const freeRemaining = await freeRemainingAfter(operation, call);
    if (freeRemaining !== undefined) context.announceFreeRemaining(freeRemaining);
    return {
      structuredContent: structured,
      content: [textContent(JSON.stringify(structured)), ...(tool.note === undefined ? [] : [textContent(tool.note(structured))])],
      ...(freeRemaining === undefined ? {} : { _meta: { costUsd: '0', freeRemaining } }),
    };
  } catch (error) {
    if (error instanceof CallerGoneError) {
      // Nobody reads this result: the call was cancelled or its HTTP request closed.
      context.log.info({ tool: tool.name }, 'the caller left before the list tool answered; no list kept');
      return errorResult(toApiError(error, context.call.requestId));
    }
    const apiError = toApiError(error, context.call.requestId);
    context.logError(error, apiError);
    return errorResult(apiError);
  } finally {
    progress?.stop();
  }
}

function registerListTool<I, A extends Record<string, unknown>, S extends FastifySchema, T>(
  server: McpServer,
  context: ToolContext,
  operation: ListOperation<I, A, S, T>,
): void {
  const { tool } = operation;
  if (tool === undefined) throw new Error('a list operation without a tool was given to the tool door');
  server.registerTool(
    tool.name,
    {
      title: tool.title,
      description: tool.description,
      inputSchema: advertisedInput(tool.input),
      outputSchema: tool.output,
      annotations: tool.annotations,
    },
    (args, ctx) => runListTool(context, operation, args, ctx),
  );
}

export function registerListTools(server: McpServer, context: ToolContext): void {
  registerListTool(server, context, listCreate);
  registerListTool(server, context, listStatus);
  registerListTool(server, context, listResultsPage);
  registerListTool(server, context, listCancel);
}
