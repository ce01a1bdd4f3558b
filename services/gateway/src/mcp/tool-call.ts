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

/** Tool arguments that are not a JSON object (the SDK's refusal, or ours). */
export const badToolArguments = (): ApiError =>
  new ApiError('invalid_request', 'The tool arguments must be a JSON object of the parameters the tool documents.');

/**
 * What is wrong with the shape of each of the request's tool calls, by JSON-RPC id: `params` not an
 * object or no tool name in it, or `arguments` there but not a JSON object (an array, a string,
 * null). The SDK refuses those before any tool runs, as a protocol error carrying its validator's
 * text, where the contract wants a tool result with the error object (tool-result.ts rewrites it).
 */
export function malformedToolCalls(body: unknown): Map<unknown, ApiError> {
  const found = new Map<unknown, ApiError>();
  for (const call of (Array.isArray(body) ? body : [body]).filter(isToolCall)) {
    const params: unknown = call.params;
    if (typeof params !== 'object' || params === null || !('name' in params) || typeof params.name !== 'string') {
      found.set(
        call.id,
        new ApiError(
          'invalid_request',
          'A tools/call names its tool in `params.name` (tools/list names them) and passes `params.arguments`.',
        ),
      );
      continue;
    }
    const args: unknown = 'arguments' in params ? params.arguments : undefined;
    if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args))) found.set(call.id, badToolArguments());
  }
  return found;
}

/** Whether the request's tool call asks for progress (`params._meta.progressToken`). */
export function wantsProgress(body: unknown): boolean {
  const params: unknown = (Array.isArray(body) ? body : [body]).find(isToolCall)?.params;
  const meta: unknown = typeof params === 'object' && params !== null && '_meta' in params ? params._meta : undefined;
  if (typeof meta !== 'object' || meta === null || !('progressToken' in meta)) return false;
  return typeof meta.progressToken === 'string' || typeof meta.progressToken === 'number';
}
