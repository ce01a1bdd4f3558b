/**
 * A list operation written once, as defineOperation writes a job's (operation.ts): the call of
 * `@svc/lists/service` it is, its REST route and its tool with their documentation (the OpenAPI
 * prose and the tool's words), and whether it is metered. Lists differ from the job operations in
 * their shapes, not in where they are defined: an upload body that each door reads its own way
 * (a stream or a CSV text), a status that is polled, results that REST downloads as a stream and
 * a tool reads a page at a time. The doors (routes/lists.ts, mcp/tools-lists.ts) adapt their
 * transport and nothing else.
 */
import type { OperationId } from '@svc/contracts';
import type { ListService } from '@svc/lists/service';
import type { ToolAnnotations } from '@modelcontextprotocol/server';
import type { FastifyBaseLogger, FastifySchema } from 'fastify';
import type { z } from 'zod';
import type { ApiKeyRecord } from '../stores/key-store.ts';

/** What a list operation runs with: the service, the calling key (whose lists it reaches), a log. */
export interface ListCall {
  lists: ListService;
  key: ApiKeyRecord;
  log: FastifyBaseLogger;
  /** Aborted when the caller left or cancelled the call (a tool call gives it; a REST upload ends with its body). */
  callerGone?: AbortSignal;
}

/** What a tool's reading of its arguments is followed by: the signal that its caller left, and where it says how far it is. */
export interface ReadFollow {
  callerGone: AbortSignal;
  /** Present when the client asked for progress (a progressToken): done of total, e.g. rows read. */
  onProgress?: (done: number, total: number) => void;
}

/** An upload body: its size limit (it may take the upload allowance, LIST_UPLOAD_TIMEOUT_MS, to arrive). */
export interface UploadLimits {
  bodyLimit: number;
}

/** The REST route: where it answers and its OpenAPI operation (validation schemas and prose). */
export interface ListRoute<S extends FastifySchema> {
  method: 'GET' | 'POST' | 'DELETE';
  url: string;
  schema: S;
  upload?: UploadLimits;
}

/** The tool: its name, words and schemas, and how its arguments become the operation's input. */
export interface ListTool<T, I> {
  name: string;
  title: string;
  description: string;
  annotations: ToolAnnotations;
  /** The arguments as the tool reads them (advertised as this schema's JSON Schema). */
  input: z.ZodObject & z.ZodType<T>;
  /** The contract's error for arguments the schema refused. */
  invalid: (error: z.ZodError) => Error;
  output: z.ZodObject;
  /** The arguments as the operation's input (a CSV text is read as an upload is), read while `follow` is watched. */
  read(args: T, follow: ReadFollow): I | Promise<I>;
  /** A tool that reports progress (its reading takes more than a moment): the words of a notification. */
  progress?: (done: number, total: number) => string;
  /** A second text after the JSON: what to do next (a status that is polled says when to ask again). */
  note?: (answer: Record<string, unknown>) => string;
}

/**
 * The metered call a list operation is: creating a list is rate limited and costs 0 now (units
 * are billed as workers process them); its answer says how many free units the key has left.
 */
export interface ListMetering {
  id: OperationId;
  freeRemaining(call: ListCall): Promise<number>;
}

export interface ListOperation<I, A, S extends FastifySchema = FastifySchema, T = I> {
  /** Absent: free (reading and cancelling lists cost nothing and are not rate limited). */
  metering?: ListMetering;
  route?: ListRoute<S>;
  tool?: ListTool<T, I>;
  perform(call: ListCall, input: I): Promise<A>;
}

/** Names the type parameters from the definition itself. */
export const defineListOperation = <I, A, S extends FastifySchema = FastifySchema, T = I>(
  operation: ListOperation<I, A, S, T>,
): ListOperation<I, A, S, T> => operation;

/** The free units the key has left after a metered list operation (undefined after a free one). */
export async function freeRemainingAfter<I, A, S extends FastifySchema, T>(
  operation: ListOperation<I, A, S, T>,
  call: ListCall,
): Promise<number | undefined> {
  return operation.metering === undefined ? undefined : operation.metering.freeRemaining(call);
}
