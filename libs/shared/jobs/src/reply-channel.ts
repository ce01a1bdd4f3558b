/**
 * How a job's answer travels back over Redis: each gateway owns one list, its inbox, named in
 * every job it submits (`JobEnvelope.replyTo`); the worker that ends the job pushes the result or
 * the failure there, and the gateway pops its inbox in batches on a connection of its own.
 *
 * Why a list and not BullMQ's QueueEvents: every gateway's QueueEvents read and parsed every event
 * of the queue's stream (added, waiting, active, completed, removed: about four per job, whoever
 * submitted it), so each gateway's cost per answer grew with the events of every gateway. An
 * inbox holds only the gateway's own answers, one message each. Why not pub/sub: a message
 * published while the gateway reconnects is lost, where a list keeps it until it is read.
 *
 * The key carries the gateway's id as its hash tag, so that on a Redis Cluster a push and a pop
 * touch one slot and inboxes spread over the primaries. Each push sets the list to expire after
 * REPLY_TTL_MS: a live gateway empties its inbox within milliseconds (an empty list is deleted),
 * so the expiry matters only to a gateway away from Redis, which gets what was pushed meanwhile
 * if it is back within that time, and to a dead gateway, whose answers then go away with it.
 *
 * An answer may come twice (a job run again after its worker lost its lock): the gateway takes the
 * first and drops what it no longer waits for.
 */
import { z } from 'zod';
import { errorKind, type RateLimitedLog } from '@svc/telemetry';
import type { Redis } from './redis.ts';
import { versionField, wireErrorField } from './job-protocol.ts';
import { parseProgressMessage, type ProgressMessage } from './progress-message.ts';

/** How long a gateway may be away from its inbox and still find the answers pushed meanwhile. */
export const REPLY_TTL_MS = 10_000;
/** How many answers one read takes at most. */
const BATCH_SIZE = 128;
/** A blocking read ends after this when nothing came, and is made again (seconds, as BRPOP takes it). */
const BLOCK_S = 5;
/** Pause after a failed read before the next (the connection itself reconnects meanwhile). */
const RETRY_DELAY_MS = 200;

/** A gateway's inbox: `<prefix>:replies:{<gateway id>}`. */
export const inboxKey = (redisPrefix: string, gatewayId: string): string => `${redisPrefix}:replies:{${gatewayId}}`;

/** A gateway id (a UUID) as a hash tag. */
const GATEWAY_ID_TAG = /^\{[0-9a-f-]{36}\}$/;

/** Whether `key` names an inbox under `redisPrefix`: a worker never writes where a job's data points otherwise. */
export const isInboxKey = (redisPrefix: string, key: string): boolean =>
  key.startsWith(`${redisPrefix}:replies:{`) && GATEWAY_ID_TAG.test(key.slice(redisPrefix.length + ':replies:'.length));

/**
 * `jobId`: the id the gateway waits on, a BullMQ job's own or, for a job in a bundle, its `replyId`.
 * `v` and a failure's `error`: the protocol's version and a handler's ApiError (job-protocol.ts).
 */
const replySchema = z.union([
  z.object({ v: versionField, jobId: z.string(), ok: z.literal(true), result: z.unknown() }),
  z.object({ v: versionField, jobId: z.string(), ok: z.literal(false), reason: z.string(), error: wireErrorField }),
]);

/** A job's answer: its result (parsed by the gateway against its kind), or why it failed. */
export type Reply = z.infer<typeof replySchema>;

/**
 * A framed answer: `FRAMED` + its JSON without the result's `body` + a newline + the body as it
 * is. A QR answer's body is kilobytes of SVG, and JSON.stringify escapes it character by character
 * (about 20 us for 7 kB under Node 20, then as long again to parse: 9 % of the qr-worker's CPU in
 * `npm run bench:qr`'s distributed profile). JSON never holds a raw newline, so the first one
 * ends the header. A message that starts with `{` is a whole-JSON answer, as before framing.
 */
const FRAMED = 'B';

/** An answer as its inbox message: framed when the gateway reads framed answers and it has a body. */
export function encodeReply(reply: Reply, framed: boolean): string {
  const { result } = reply.ok ? reply : { result: undefined };
  if (!framed || typeof result !== 'object' || result === null || !('body' in result) || typeof result.body !== 'string')
    return JSON.stringify(reply);
  return `${FRAMED}${JSON.stringify({ ...reply, result: { ...result, body: undefined } })}\n${result.body}`;
}

/**
 * Pushes `replies` to the inbox `to` (one LPUSH, however many: a bundle's answers, job-bundles.ts),
 * and (re)sets the inbox's expiry: two commands written at once, in order, on one connection. Not a MULTI: ioredis builds a pipeline object for it that walks
 * every command the connection defines, and a worker's connection carries all of BullMQ's scripts
 * (with MULTI, sending an answer took about 30 % of the qr-worker's CPU in `npm run bench:qr`'s
 * profile, BENCH_CPU_PROF_DIR). `framed`: the job said its gateway reads framed answers.
 */
export async function sendReplies(redis: Redis, to: string, replies: readonly Reply[], framed = false): Promise<void> {
  await Promise.all([redis.lpush(to, ...replies.map((reply) => encodeReply(reply, framed))), redis.pexpire(to, REPLY_TTL_MS)]);
}

/**
 * Pushes one progress message (progress-message.ts) to the inbox `to`. Sent on the connection that
 * later pushes the job's answer, so the gateway reads it before the answer.
 */
export async function sendProgress(redis: Redis, to: string, message: ProgressMessage): Promise<void> {
  await Promise.all([redis.lpush(to, JSON.stringify(message)), redis.pexpire(to, REPLY_TTL_MS)]);
}

/** A message of an inbox, framed or whole JSON, or undefined when it is not one (logged by the reader). */
export function parseReply(message: string): Reply | undefined {
  try {
    if (!message.startsWith(FRAMED)) {
      const parsed = replySchema.safeParse(JSON.parse(message));
      return parsed.success ? parsed.data : undefined;
    }
    const headerEnd = message.indexOf('\n');
    if (headerEnd < 0) return undefined;
    const parsed = replySchema.safeParse(JSON.parse(message.slice(FRAMED.length, headerEnd)));
    if (!parsed.success || !parsed.data.ok || typeof parsed.data.result !== 'object' || parsed.data.result === null) return undefined;
    return { ...parsed.data, result: { ...parsed.data.result, body: message.slice(headerEnd + 1) } };
  } catch {
    return undefined;
  }
}

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];

/** What a pipelined BRPOP + RPOP answered: the messages popped, oldest first. */
function popped(results: Array<[Error | null, unknown]> | null): string[] {
  const [blocking, rest] = results ?? [];
  if (blocking?.[0]) throw blocking[0];
  if (rest?.[0]) throw rest[0];
  // BRPOP answers [key, message], or null when its time ran out; RPOP with a count a list, or null.
  return [...strings(blocking?.[1]).slice(1), ...strings(rest?.[1])];
}

/**
 * The gateway's side: reads its inbox until closed and hands each answer to `deliver`. The
 * connection is the reader's alone (a blocking read holds it; on a Cluster, the whole node link).
 */
export class ReplyInbox {
  private closed = false;
  private readonly reading: Promise<void>;
  /**
   * Ends the pending read on close: a read pending on a connection that is reconnecting is never
   * rejected by its disconnect. Set for one read and cleared after it, not a promise raced by
   * every read: a `Promise.race` against a promise that lives as long as the inbox left a
   * reaction on it per read, each holding the batch that read answered (issue 32: 4.7 KB kept per
   * QR answer, the gateway out of memory within minutes under load).
   */
  private interrupt: (() => void) | undefined;

  constructor(
    private readonly connection: Redis,
    readonly key: string,
    private readonly deliver: (reply: Reply) => void,
    private readonly log: RateLimitedLog,
    /** Where progress messages go (protocol v2); without it they are dropped like any message that is no answer. */
    private readonly onProgress?: (message: ProgressMessage) => void,
  ) {
    this.reading = this.read();
  }

  /** `read`'s answer, or undefined once the inbox is closed; nothing of it is kept after it settles. */
  private untilClosed<T>(read: Promise<T>): Promise<T | undefined> {
    return new Promise<T | undefined>((resolve, reject) => {
      this.interrupt = () => resolve(undefined);
      read.then(resolve, reject);
    }).finally(() => (this.interrupt = undefined));
  }

  private async read(): Promise<void> {
    while (!this.closed) {
      try {
        // One round trip per batch: BRPOP waits for the first answer, RPOP takes those behind it
        // (BLMPOP would do both but needs Redis 7; the deployment promises 6.2).
        const read = this.connection
          .pipeline()
          .brpop(this.key, BLOCK_S)
          .rpop(this.key, BATCH_SIZE - 1)
          .exec();
        const results = await this.untilClosed(read);
        if (results === undefined) return;
        for (const message of popped(results)) {
          if (this.closed) return;
          const reply = parseReply(message);
          if (reply !== undefined) {
            this.deliver(reply);
            continue;
          }
          const progress = this.onProgress === undefined ? undefined : parseProgressMessage(message);
          if (progress === undefined)
            this.log('error', 'reply:malformed', { inbox: this.key }, 'an inbox message is not a job answer; dropped');
          else this.onProgress?.(progress);
        }
      } catch (error) {
        if (this.closed) return;
        this.log('warn', `reply:${errorKind(error)}`, { inbox: this.key, err: error }, 'reading the reply inbox failed; reading again');
        await new Promise((resolve) => setTimeout(resolve, RETRY_DELAY_MS));
      }
    }
  }

  /** Stops reading: the pending blocking read is dropped with the connection (a QUIT would wait behind it). */
  async close(): Promise<void> {
    this.closed = true;
    this.interrupt?.();
    this.connection.disconnect();
    await this.reading;
  }
}
