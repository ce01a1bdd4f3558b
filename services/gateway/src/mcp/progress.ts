/**
 * Progress of a tool call (`notifications/progress`), sent when the client put a
 * `progressToken` in the call's `_meta`: the job reports how far it is (a verify batch: distinct
 * addresses settled of its total, from the verifier through the job transport), and each report
 * that moves forward becomes one notification. The SDK then answers the call as an event stream
 * (exchange.ts pipes it), the notifications first and the result last.
 */
import type { ServerContext } from '@modelcontextprotocol/server';

/** The call's progress reporter, or undefined when its client asked for none. */
export function progressReporter(ctx: ServerContext | undefined): ((done: number, total: number) => void) | undefined {
  const token = ctx?.mcpReq._meta?.progressToken;
  if (ctx === undefined || token === undefined) return undefined;
  let last = -1;
  return (done, total) => {
    // The specification wants the value to grow with every notification of a token.
    if (done <= last) return;
    last = done;
    const message = `${done} of ${total} distinct addresses settled`;
    ctx.mcpReq
      .notify({ method: 'notifications/progress', params: { progressToken: token, progress: done, total, message } })
      .catch(() => undefined); // a client gone is the call's own business (cancellation)
  };
}
