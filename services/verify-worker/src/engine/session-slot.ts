/**
 * A slot for the next session to a mail server, and the parked connection it may reuse
 * (smtp/idle-sessions.ts). A parked connection holds its slot, so the per-server limit counts
 * every open connection, parked ones included, in every worker. In this order:
 * 1. a connection parked for this server: its slot is taken over when the limiter's rules allow
 *    this kind of work to start now (a list gives way to a waiting batch: the connection is then
 *    ended, and its slot goes to whoever waits);
 * 2. else a slot from the limiter, while also waiting for a connection parked meanwhile by
 *    another session of this process, whichever comes first: a slot held by a parked
 *    connection is handed on rather than left idle while someone waits.
 * A session that must run on a connection of its own (`fresh`: a list's retry round) ends the
 * parked connections it would have taken, so that their slots come back to the limiter for it.
 */
import type { HeldSlot, SessionLimiter } from './host-limiter.ts';
import type { IdleSessions, ParkedSession } from '../smtp/idle-sessions.ts';

export interface SessionSlot {
  slot: HeldSlot;
  /** The parked connection to resume, owned now by the caller with `slot`. */
  resume?: ParkedSession;
}

/** Rejects when `signal` aborts before a slot is had. */
export async function takeSessionSlot(
  limiter: SessionLimiter,
  idle: IdleSessions | undefined,
  key: string,
  host: string,
  signal: AbortSignal,
  fresh = false,
): Promise<SessionSlot> {
  for (;;) {
    signal.throwIfAborted();
    const parked = idle?.take(key);
    if (parked !== undefined) {
      const adopted = fresh ? endParked(idle!, parked) : await adopt(limiter, idle!, parked);
      if (adopted !== undefined) return adopted;
    }
    if (idle === undefined) return { slot: await limiter.acquire(host, signal) };
    const got = await slotOrParked(limiter, idle, key, host, signal);
    if ('slot' in got) return got;
    const adopted = fresh ? endParked(idle, got.parked) : await adopt(limiter, idle, got.parked);
    if (adopted !== undefined) return adopted;
  }
}

/** Not taken: the connection is ended, and its slot goes back once it is closed. */
function endParked(idle: IdleSessions, parked: ParkedSession): undefined {
  idle.end(parked);
  return undefined;
}

async function adopt(limiter: SessionLimiter, idle: IdleSessions, parked: ParkedSession): Promise<SessionSlot | undefined> {
  const slot = parked.slot === undefined ? undefined : await limiter.adopt(parked.slot).catch(() => undefined);
  if (slot === undefined) {
    idle.end(parked); // its slot goes back once it is closed
    return undefined;
  }
  return { slot, resume: { ...parked, slot } };
}

/**
 * A slot from the limiter, or a connection parked for `key` meanwhile (the limiter's wait is then
 * given up). A batch waits in the pool ahead of lists: a list handed the connection while a batch
 * waits could not take its slot over and would end a connection the batch could have used.
 */
async function slotOrParked(
  limiter: SessionLimiter,
  idle: IdleSessions,
  key: string,
  host: string,
  signal: AbortSignal,
): Promise<{ slot: HeldSlot } | { parked: ParkedSession }> {
  const waiter = idle.wait(key, limiter.first === true);
  const stop = new AbortController();
  const acquiring = limiter.acquire(host, AbortSignal.any([signal, stop.signal])).then(
    (slot) => ({ slot }),
    (error: unknown) => ({ error }),
  );
  const first = await Promise.race([acquiring, waiter.handed.then((parked) => ({ parked }))]);
  if ('parked' in first) {
    stop.abort();
    const late = await acquiring; // granted in the same turn: not needed after all
    if ('slot' in late) late.slot.release();
    return first;
  }
  waiter.cancel();
  if ('error' in first) throw first.error instanceof Error ? first.error : new Error(String(first.error));
  return first;
}
