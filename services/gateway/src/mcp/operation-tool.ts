/**
 * An operation's tool door: the arguments are validated by the operation's tool schema (its
 * refusals the same contract errors as REST), the operation runs, and `present` turns its answer
 * into the tool's content. runTool meters it and maps every failure to an `isError` result.
 */
import type { CallToolResult, ServerContext } from '@modelcontextprotocol/server';
import { progressReporter } from './progress.ts';
import type { CallContext } from '../operation.ts';
import { perform, type Operation } from '../operations/operation.ts';
import { parseArguments } from './advertised-schema.ts';
import { runTool, type ToolContext, type ToolOutput } from './tool-result.ts';

export function operationTool<I, P, R, A>(
  context: ToolContext,
  operation: Operation<I, P, R, A>,
  present: (answer: A) => ToolOutput,
): (args: unknown, ctx?: ServerContext) => Promise<CallToolResult> {
  return (args, ctx) =>
    runTool(context, operation.id, async () => {
      const input = parseArguments(operation.input.tool, args, operation.input.invalid);
      const onProgress = progressReporter(ctx);
      // The call context is a getter-bearing object (callerGone is made on first read): keep it whole.
      const call = onProgress === undefined ? context.call : withProgress(context.call, onProgress);
      return present(await perform(operation, context.runner, input, call));
    });
}

function withProgress(call: CallContext, onProgress: (done: number, total: number) => void): CallContext {
  return {
    requestId: call.requestId,
    get callerGone() {
      return call.callerGone;
    },
    ...(call.keyId === undefined ? {} : { keyId: call.keyId }),
    onProgress,
  };
}
