/**
 * A billable operation written once: its input (as each door receives it), the job payload that
 * input becomes, the job kind that runs it and what its result answers. The REST routes and the
 * tools are doors around it: they adapt their transport (query string or body vs JSON
 * arguments, HTTP response vs tool result) and nothing else, so both answer alike. The list
 * operations, calls of the list service rather than jobs, are written the same way with their
 * route and tool documentation beside them (list-operation.ts, lists/).
 */
import type { ApiError, JobKind, OperationId } from '@svc/contracts';
import type { z } from 'zod';
import type { CallContext, JobRunner } from '../operation.ts';

export interface OperationInput<I> {
  /** The REST request's input (its query string or body), validated into the operation's input. */
  rest: z.ZodType<I, Record<string, unknown>>;
  /** The tool's arguments (the REST parameters as JSON values), validated into the same input. */
  tool: z.ZodType<I>;
  /** What the tool server advertises (`tool` without its cross-field rules and transforms). */
  advertised: z.ZodObject;
  /** The contract's error for input either schema refused: both doors refuse with the same words. */
  invalid: (error: z.ZodError) => ApiError;
}

export interface Operation<I, P, R, A> {
  id: OperationId;
  input: OperationInput<I>;
  job: JobKind<P, R>;
  payload(input: I, call: CallContext): P;
  /** What the job's result answers, or throws the contract's error it amounts to. */
  answer(input: I, result: R): A;
}

/** Names the type parameters from the definition itself. */
export const defineOperation = <I, P, R, A>(operation: Operation<I, P, R, A>): Operation<I, P, R, A> => operation;

/**
 * The operation's job, submitted through the runner: its promise is the runner's own, so that a
 * door on the hot path (QR) awaits it and calls `answer` itself without a promise in between.
 */
export function start<I, P, R, A>(operation: Operation<I, P, R, A>, runner: JobRunner, input: I, call: CallContext): Promise<R> {
  return runner.run(operation.id, operation.job, operation.payload(input, call), call);
}

/** Runs the operation: its job through the runner, then its answer. */
export async function perform<I, P, R, A>(operation: Operation<I, P, R, A>, runner: JobRunner, input: I, call: CallContext): Promise<A> {
  return operation.answer(input, await start(operation, runner, input, call));
}
