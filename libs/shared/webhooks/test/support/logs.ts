/** A real pino logger whose lines the test can read (what an operator would see in the logs). */
import { Writable } from 'node:stream';
import { withErrorLog, type Logger } from '@svc/telemetry';
import { pino } from 'pino';

export interface CapturedLogs {
  logger: Logger;
  lines: Array<Record<string, unknown>>;
  messages(): string[];
}

export function captureLogs(): CapturedLogs {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: withErrorLog(pino({ level: 'debug' }, sink)), lines, messages: () => lines.map((line) => String(line.msg)) };
}
