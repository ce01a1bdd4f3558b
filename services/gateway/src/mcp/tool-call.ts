/**
 * Which billable operation an MCP POST performs. A `tools/call` request is one call of its
 * tool's operation; everything else (initialize, tools/list, notifications) is free and
 * unlimited. The limiter and the meter count one operation per HTTP request, so a JSON-RPC batch
 * may carry at most one tool call.
 */
import { ApiError, OPERATIONS, type OperationId } from '@svc/contracts';

interface ToolCallMessage {
  method: 'tools/call';
  id: unknown;
  params?: { name?: unknown };
}

function isToolCall(message: unknown): message is ToolCallMessage {
  // A message without an id is a notification: the SDK runs no tool for it.
  return typeof message === 'object' && message !== null && 'id' in message && (message as { method?: unknown }).method === 'tools/call';
}

export function toolCallOperation(body: unknown, operations: readonly OperationId[]): OperationId | undefined {
  const calls = (Array.isArray(body) ? body : [body]).filter(isToolCall);
  if (calls.length > 1) throw new ApiError('invalid_request', 'Send one tools/call per HTTP request.');
  const name = calls[0]?.params?.name;
  // An unknown tool name is answered by the SDK; it costs nothing and counts against no budget.
  return operations.find((operation) => OPERATIONS[operation].tool === name);
}

/** The JSON-RPC id of the request's tool call, if it carries one. */
export function toolCallId(body: unknown): unknown {
  return (Array.isArray(body) ? body : [body]).find(isToolCall)?.id;
}

/**
 * The JSON-RPC ids of the request's tool calls whose `arguments` are there but not a JSON object
 * (an array, a string, null): the SDK refuses those before any tool runs, as a protocol error,
 * where the contract wants a tool result (tool-result.ts rewrites it).
 */
export function callsWithBadArguments(body: unknown): unknown[] {
  return (Array.isArray(body) ? body : [body]).filter(isToolCall).flatMap((call) => {
    const params: unknown = call.params;
    if (typeof params !== 'object' || params === null || !('arguments' in params)) return [];
    const args: unknown = params.arguments;
    return args === undefined || (typeof args === 'object' && args !== null && !Array.isArray(args)) ? [] : [call.id];
  });
}
