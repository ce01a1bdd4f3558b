/**
 * An operation's tool door: the arguments are validated by the operation's tool schema (its
 * refusals the same contract errors as REST), the operation runs, and `present` turns its answer
 * into the tool's content. runTool meters it and maps every failure to an `isError` result.
 */
import type { CallToolResult } from '@modelcontextprotocol/server';
import { perform, type Operation } from '../operations/operation.ts';
import { parseArguments } from './advertised-schema.ts';
import { runTool, type ToolContext, type ToolOutput } from './tool-result.ts';

export function operationTool<I, P, R, A>(
  context: ToolContext,
  operation: Operation<I, P, R, A>,
  present: (answer: A) => ToolOutput,
): (args: unknown) => Promise<CallToolResult> {
  return (args) =>
    runTool(context, operation.id, async () => {
      const input = parseArguments(operation.input.tool, args, operation.input.invalid);
      return present(await perform(operation, context.runner, input, context.call));
    });
}
