/**
 * Cancelled tool calls. An MCP client aborts a request by sending `notifications/cancelled`
 * with the request's JSON-RPC id, in a POST of its own (stateless Streamable HTTP: there is no
 * session to route it by). The gateway keeps the tool calls in flight per key and JSON-RPC id;
 * a cancellation from the same key closes the original HTTP response, and from there on the
 * call is a caller gone like any other: its job is cancelled where cheap and it is not billed.
 *
 * An id that two of the key's clients have in flight at once is ambiguous and left alone. With
 * a relay (distributed mode), a cancellation this replica cannot match is passed on to the replica
 * that holds the call (cancellation-relay.ts).
 */
import type { FastifyReply } from 'fastify';
import { callSlot, type CancellationRelay } from './cancellation-relay.ts';

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

  constructor(private readonly relay?: CancellationRelay) {}

  /** Listens for the cancellations other replicas pass on (distributed mode). */
  async listen(): Promise<void> {
    await this.relay?.listen((slot) => this.closeOnly(slot));
  }

  /** Tracks a tool call until its HTTP response closes. */
  track(keyId: string, rpcId: unknown, reply: FastifyReply): void {
    if (typeof rpcId !== 'string' && typeof rpcId !== 'number') return;
    const slot = callSlot(keyId, rpcId);
    const replies = this.calls.get(slot) ?? new Set<FastifyReply>();
    replies.add(reply);
    this.calls.set(slot, replies);
    this.relay?.started(slot);
    reply.raw.once('close', () => {
      replies.delete(reply);
      if (replies.size === 0) this.calls.delete(slot);
      this.relay?.ended(slot);
    });
  }

  /** Closes the calls a body's cancellations name, here or (through the relay) on another replica; returns how many were here. */
  async cancel(keyId: string, body: unknown): Promise<number> {
    let cancelled = 0;
    for (const message of Array.isArray(body) ? body : [body]) {
      if (!isCancellation(message)) continue;
      const slot = callSlot(keyId, message.params.requestId);
      if (this.closeOnly(slot)) cancelled += 1;
      else if (!this.calls.has(slot)) await this.relay?.forward(slot).catch(() => undefined);
    }
    return cancelled;
  }

  /** Closes the slot's call when this replica holds exactly one. */
  private closeOnly(slot: string): boolean {
    const replies = this.calls.get(slot);
    if (replies?.size !== 1) return false;
    for (const reply of replies) reply.raw.destroy();
    return true;
  }
}
