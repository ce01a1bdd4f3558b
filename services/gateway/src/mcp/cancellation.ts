/**
 * Cancelled tool calls. An MCP client aborts a request by sending `notifications/cancelled`
 * with the request's JSON-RPC id, in a POST of its own (stateless Streamable HTTP: there is no
 * session to route it by). The gateway keeps the tool calls in flight per key and JSON-RPC id;
 * a cancellation from the same key closes the original HTTP response, and from there on the
 * call is a caller gone like any other: its job is cancelled where cheap and it is not billed.
 *
 * Only calls in flight on this gateway replica can be found; an id that two of the key's
 * clients have in flight at once is ambiguous and left alone.
 */
import type { FastifyReply } from 'fastify';

interface CancelledNotification {
  method: 'notifications/cancelled';
  params: { requestId: string | number };
}

function isCancellation(message: unknown): message is CancelledNotification {
  if (typeof message !== 'object' || message === null) return false;
  const { method, params } = message as { method?: unknown; params?: { requestId?: unknown } };
  const id = params?.requestId;
  return method === 'notifications/cancelled' && (typeof id === 'string' || typeof id === 'number');
}

export class InFlightToolCalls {
  private readonly calls = new Map<string, Set<FastifyReply>>();

  private static slot(keyId: string, rpcId: string | number): string {
    return `${keyId} ${typeof rpcId}:${rpcId}`;
  }

  /** Tracks a tool call until its HTTP response closes. */
  track(keyId: string, rpcId: unknown, reply: FastifyReply): void {
    if (typeof rpcId !== 'string' && typeof rpcId !== 'number') return;
    const slot = InFlightToolCalls.slot(keyId, rpcId);
    const replies = this.calls.get(slot) ?? new Set<FastifyReply>();
    replies.add(reply);
    this.calls.set(slot, replies);
    reply.raw.once('close', () => {
      replies.delete(reply);
      if (replies.size === 0) this.calls.delete(slot);
    });
  }

  /** Closes the calls a body's cancellations name; returns how many. */
  cancel(keyId: string, body: unknown): number {
    let cancelled = 0;
    for (const message of Array.isArray(body) ? body : [body]) {
      if (!isCancellation(message)) continue;
      const replies = this.calls.get(InFlightToolCalls.slot(keyId, message.params.requestId));
      if (replies?.size !== 1) continue;
      for (const reply of replies) reply.raw.destroy();
      cancelled += 1;
    }
    return cancelled;
  }
}
