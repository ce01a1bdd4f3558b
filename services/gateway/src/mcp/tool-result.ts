/**
 * The shape of every tool answer (docs/api.md, "Tool servers (MCP)"): a success carries the declared
 * `structuredContent`, a text rendering of it and the call's cost in `_meta`; any failure, bad
 * input or a failed job alike, is a tool result with `isError: true` whose text is the
 * contract's error object, never a protocol error and never a stack trace.
 */
import { formatUsd, type ApiError, type OperationId } from '@svc/contracts';
import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyBaseLogger } from 'fastify';
import type { ListService } from '../lists/list-service.ts';
import type { JobRunner } from '../operation.ts';
import type { ChargeResult } from '../plugins/metering.ts';
import { toApiError } from '../plugins/errors.ts';
import type { ApiKeyRecord } from '../stores/key-store.ts';

/** What a tool needs from the HTTP request that carries its call. */
export interface ToolContext {
  runner: JobRunner;
  /** The caller's key (every tool call is authenticated) and the lists it may reach. */
  key: ApiKeyRecord;
  lists: ListService;
  requestId: string;
  log: FastifyBaseLogger;
  /** Meters this successful call and puts its cost headers on the HTTP response. */
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
    const apiError = toApiError(error instanceof Error ? error : new Error(String(error)), context.requestId);
    if (apiError.status >= 500) context.log.error({ err: apiError.cause ?? error, code: apiError.code, operation }, 'tool call failed');
    else context.log.info({ code: apiError.code, operation }, apiError.message);
    return errorResult(apiError);
  }
}
