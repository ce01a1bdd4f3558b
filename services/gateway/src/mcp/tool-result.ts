/**
 * The shape of every tool answer (docs/api.md, "Tool servers (MCP)"): a success carries the declared
 * `structuredContent`, a text rendering of it and the call's cost in `_meta`; any failure, bad
 * input or a failed job alike, is a tool result with `isError: true` whose text is the
 * contract's error object, never a protocol error and never a stack trace.
 */
import { ApiError, formatUsd, type OperationId } from '@svc/contracts';
import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/server';
import type { FastifyBaseLogger } from 'fastify';
import { CallerGoneError } from '@svc/jobs';
import { toApiError } from '../errors/api-errors.ts';
import type { ListService } from '@svc/lists/service';
import type { CallContext, JobRunner } from '../operation.ts';
import type { Feedback } from '@svc/feedback';
import type { ChargeResult } from '../plugins/metering.ts';
import type { ApiKeyRecord } from '../stores/key-store.ts';
import { badToolArguments } from './tool-call.ts';

/** What a tool needs from the HTTP request that carries its call. */
export interface ToolContext {
  runner: JobRunner;
  /** The caller's key (every tool call is authenticated) and the lists it may reach. */
  key: ApiKeyRecord;
  lists: ListService;
  /** Learning from sends: the feedback tool reports through it (absent: no feedback tool). */
  feedback?: Feedback;
  /** The request id and the signal that the caller has left. */
  call: CallContext;
  log: FastifyBaseLogger;
  /** Logs a call that failed, to `log` (the gateway's ApiErrorLog: backend refusals once per kind and window). */
  logError(error: unknown, apiError: ApiError, fields?: Record<string, unknown>): void;
  /** Meters this successful call and puts its cost headers on the HTTP response (not once the caller left). */
  charge(operation: OperationId): Promise<ChargeResult>;
  /** Puts the free units left on the HTTP response, for a call that costs nothing now (creating a list). */
  announceFreeRemaining(freeRemaining: number): void;
}

export interface ToolOutput {
  structured: Record<string, unknown>;
  content: ContentBlock[];
}

export const textContent = (text: string): ContentBlock => ({ type: 'text', text });
export const imageContent = (base64: string, mimeType: string): ContentBlock => ({ type: 'image', data: base64, mimeType });

export function errorResult(error: ApiError): CallToolResult {
  return { isError: true, content: [textContent(JSON.stringify(error.toBody()))] };
}

/** Runs one tool call: metered once and only when `work` succeeded, like a REST call. */
export async function runTool(context: ToolContext, operation: OperationId, work: () => Promise<ToolOutput>): Promise<CallToolResult> {
  try {
    const output = await work();
    const charged = await context.charge(operation);
    return {
      structuredContent: output.structured,
      content: output.content,
      _meta: { costUsd: formatUsd(charged.costMicroUsd), freeRemaining: charged.freeRemaining },
    };
  } catch (error) {
    if (error instanceof CallerGoneError) {
      // Nobody reads this result: the HTTP request that carried the call is closed.
      context.log.info({ operation }, 'the caller left before the tool result was ready; not billed');
      return errorResult(toApiError(error, context.call.requestId));
    }
    const apiError = toApiError(error, context.call.requestId);
    context.logError(error, apiError, { operation });
    return errorResult(apiError);
  }
}

interface RpcResponse {
  jsonrpc?: unknown;
  id?: unknown;
  error?: unknown;
  result?: { isError?: unknown; content?: Array<{ type?: unknown; text?: unknown }> };
}

/**
 * A JSON-RPC error the SDK answers with its validator's issues as text (`-32603` and a JSON dump,
 * for a request whose params do not fit the method, e.g. a `tools/list` cursor that is a number):
 * `-32602` and one sentence naming the parameter instead.
 */
function humanRpcError(error: unknown): unknown {
  if (typeof error !== 'object' || error === null || !('message' in error) || typeof error.message !== 'string') return error;
  let issues: unknown;
  try {
    issues = JSON.parse(error.message);
  } catch {
    return error;
  }
  if (!Array.isArray(issues)) return error;
  const first: unknown = issues[0];
  if (typeof first !== 'object' || first === null || !('path' in first) || !Array.isArray(first.path)) return error;
  const expected =
    'expected' in first && typeof first.expected === 'string'
      ? `must be ${first.expected === 'record' ? 'an object' : `a ${first.expected}`}`
      : 'is not valid';
  return { code: -32602, message: `Invalid params: \`${first.path.map(String).join('.')}\` ${expected}.` };
}

/** What the SDK says itself when a call never reaches a tool, as the contract's error. */
function sdkToolError(text: string, requestId: string): ApiError {
  const unknownTool = unknownToolOf({ message: text.replace(/^MCP error -?\d+: /, '') });
  if (unknownTool !== undefined) return unknownTool;
  if (/Input validation error|Invalid arguments/.test(text)) return badToolArguments();
  return toApiError(new Error(text), requestId);
}

/** The SDK's protocol error for a call of a tool the server does not have, as the contract's error. */
function unknownToolOf(error: unknown): ApiError | undefined {
  if (typeof error !== 'object' || error === null || !('message' in error) || typeof error.message !== 'string') return undefined;
  const name = /^Tool (.*) not found$/.exec(error.message)?.[1];
  return name === undefined ? undefined : new ApiError('not_found', `No tool \`${name}\` on this server; tools/list names its tools.`);
}

const isErrorBody = (text: string): boolean => {
  try {
    const parsed = JSON.parse(text) as { error?: unknown; message?: unknown };
    return typeof parsed.error === 'string' && typeof parsed.message === 'string';
  } catch {
    return false;
  }
};

/**
 * Every failed tool result in a JSON-RPC answer carries the contract's error object: those of our
 * tools already do; the SDK's own (an unknown tool, arguments that are not an object) are
 * rewritten here, at the edge. `malformed`: the request's tool calls whose shape the SDK refuses
 * with a protocol error (-32603 and its validator's text), by id, with the contract's error for
 * each (tool-call.ts): input problems are tool results, so those become one. Other such
 * validator dumps become a -32602 in one sentence. `resultFields` go on every result made here
 * from a protocol error (a 2026 result carries `resultType`).
 */
export function withContractToolErrors(
  body: string,
  requestId: string,
  malformed: ReadonlyMap<unknown, ApiError> = new Map(),
  resultFields: Record<string, unknown> = {},
): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return body;
  }
  let changed = false;
  for (const message of (Array.isArray(parsed) ? parsed : [parsed]) as RpcResponse[]) {
    const refused = message?.error === undefined ? undefined : malformed.get(message.id);
    if (refused !== undefined) {
      delete message.error;
      message.result = { ...errorResult(refused), ...resultFields };
      changed = true;
      continue;
    }
    const unknownTool = unknownToolOf(message?.error);
    if (unknownTool !== undefined) {
      delete message.error;
      message.result = { ...errorResult(unknownTool), ...resultFields };
      changed = true;
      continue;
    }
    if (message?.error !== undefined) {
      const human = humanRpcError(message.error);
      if (human !== message.error) [message.error, changed] = [human, true];
      continue;
    }
    const result = message?.result;
    const first = result?.content?.[0];
    if (result?.isError !== true || typeof first?.text !== 'string' || isErrorBody(first.text)) continue;
    result.content = [textContent(JSON.stringify(sdkToolError(first.text, requestId).toBody()))];
    changed = true;
  }
  return changed ? JSON.stringify(parsed) : body;
}
