/** A JobRunner that records what it was asked to run and answers a canned result, parsed by the job kind. */
import type { OperationId } from '@svc/contracts';
import type { CallContext, JobRunner } from '../../src/operation.ts';

export interface Submitted {
  operation: OperationId;
  kind: string;
  payload: unknown;
}

export interface RecordingRunner extends JobRunner {
  submitted: Submitted[];
  /** The promise the last run answered. */
  last: Promise<unknown> | undefined;
}

export function recordingRunner(answer: unknown): RecordingRunner {
  const runner: RecordingRunner = {
    submitted: [],
    last: undefined,
    run(operation, kind, payload) {
      runner.submitted.push({ operation, kind: kind.name, payload });
      const result = Promise.resolve(kind.result.parse(answer));
      runner.last = result;
      return result;
    },
  };
  return runner;
}

export const call: CallContext = { requestId: 'req-1', callerGone: new AbortController().signal };
