/**
 * `verify-list`: the process around a run. Ctrl-C (or SIGTERM) stops the client, never the
 * list: it says how to resume and exits 130 (143); a second Ctrl-C exits at once. Exit codes:
 * 0 every entry verified, 1 a failure or a list that did not complete, 2 a usage error.
 */
import { createInterface } from 'node:readline/promises';
import { Unreachable } from './api.ts';
import { USAGE, UsageError, parseOptions, resumeCommand, type Options } from './options.ts';
import { run, type Reporter, type RunState } from './run.ts';

const CLEAR_LINE = '\r\x1b[2K';

function terminalReporter(): Reporter & { finishLine(): void } {
  const interactive = process.stderr.isTTY === true;
  let drawn = false;
  // While a question waits for its answer the progress line is not redrawn over it.
  let asking = false;
  const finishLine = () => {
    if (drawn) process.stderr.write(CLEAR_LINE);
    drawn = false;
  };
  return {
    interactive,
    notice: (message) => {
      finishLine();
      process.stderr.write(`verify-list: ${message}\n`);
    },
    progress: (line) => {
      if (asking) return;
      if (interactive) {
        process.stderr.write(`${CLEAR_LINE}${line.slice(0, Math.max(20, (process.stderr.columns || 100) - 1))}`);
        drawn = true;
      } else {
        process.stderr.write(`verify-list: ${line}\n`);
      }
    },
    result: (message) => {
      finishLine();
      process.stdout.write(`${message}\n`);
    },
    finishLine,
    // Only with a person at the terminal: a script or a log never waits for an answer.
    ...(interactive && process.stdin.isTTY === true
      ? {
          ask: async (question: string, signal: AbortSignal): Promise<boolean> => {
            finishLine();
            asking = true;
            const prompt = createInterface({ input: process.stdin, output: process.stderr });
            try {
              const answer = await prompt.question(`verify-list: ${question}`, { signal });
              return /^\s*y(es)?\s*$/i.test(answer);
            } finally {
              prompt.close();
              asking = false;
            }
          },
        }
      : {}),
  };
}

function interrupted(options: Options, state: RunState): string {
  if (state.listId === undefined)
    return 'interrupted before the list was created: nothing runs on the server unless the upload had already arrived (GET /v1/email-verify/lists shows your lists).';
  const keyNote = options.keyFromFlag ? ' (with your key in VERIFY_API_KEY or --key)' : '';
  return `interrupted. List ${state.listId} keeps running on the server; resume with${keyNote}:\n  ${resumeCommand(options, state.listId)}`;
}

async function main(): Promise<number> {
  let options: Options | 'help';
  try {
    options = parseOptions(process.argv.slice(2), process.env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`verify-list: ${error.message} (verify-list --help says how)\n`);
    return 2;
  }
  if (options === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }

  const reporter = terminalReporter();
  const state: RunState = { listId: undefined };
  const stop = new AbortController();
  let exitCode = 130;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stop.signal.aborted) process.exit(exitCode); // a second Ctrl-C: no more waiting
    exitCode = signal === 'SIGTERM' ? 143 : 130;
    stop.abort(new Error(signal));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  try {
    return await run(options, reporter, state, stop.signal);
  } catch (error) {
    reporter.finishLine();
    if (stop.signal.aborted) {
      process.stderr.write(`verify-list: ${interrupted(options, state)}\n`);
      return exitCode;
    }
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`verify-list: ${message}\n`);
    if (error instanceof Unreachable && state.listId !== undefined)
      process.stderr.write(`verify-list: the list keeps running on the server; resume with:\n  ${resumeCommand(options, state.listId)}\n`);
    return 1;
  }
}

process.exitCode = await main();
