/**
 * The shape of every tool answer (decisions.md "Tool servers"): a success carries the declared
 * `structuredContent`, a text rendering of it and the call's cost in `_meta`; any failure, bad
 * input or a failed job alike, is a tool result with `isError: true` whose text is the
 * contract's error object, never a protocol error and never a stack trace.
 */
import { formatUsd, type ApiError, type OperationId } from '@svc/contracts';
import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyBaseLogger } from 'fastify';
import { CallerGoneError } from '@svc/jobs';
import { isBug, toApiError } from '../errors/api-errors.ts';
import type { CallContext, JobRunner } from '../operation.ts';
import type { ChargeResult } from '../plugins/metering.ts';

/** What a tool needs from the HTTP request that carries its call. */
export interface ToolContext {
  runner: JobRunner;
  /** The request id and the signal that the caller has left. */
  call: CallContext;
  log: FastifyBaseLogger;
  /** Meters this successful call and puts its cost headers on the HTTP response (not once the caller left). */
  charge(operation: OperationId): Promise<ChargeResult>;
}

export interface ToolOutput {
  structured: Record<string, unknown>;
  content: ContentBlock[];
}

export const textContent = (text: string): ContentBlock => ({ type: 'text', text });

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
    if (isBug(apiError)) context.log.error({ err: error, code: apiError.code, operation }, 'tool call failed');
    else if (apiError.status >= 500) context.log.warn({ code: apiError.code, operation }, apiError.message);
    else context.log.info({ code: apiError.code, operation }, apiError.message);
    return errorResult(apiError);
  }
}
