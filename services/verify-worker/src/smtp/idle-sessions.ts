/**
 * Idle SMTP sessions kept open briefly for the next batch to the same server
 * (`VERIFY_SMTP_SESSION_IDLE_MS`, decisions "Politeness at volume"): a session that ended cleanly
 * is parked here instead of sending QUIT, and the next session to that server, egress, HELO name
 * and sender takes it and starts with `RSET`.
 *
 * A parked connection is still a connection to the server, so it keeps its session slot
 * (engine/host-limiter.ts): the slot goes to the session that takes the connection, or is given
 * back once the parked connection is closed (idle too long, closed by the server, shutdown). A
 * session waiting for a slot to a server also waits here (`wait`): a session parked meanwhile is
 * handed straight to it, so that a slot held by a parked connection never idles while someone
 * waits in this process. Waiters of work that goes first (batches) are handed one before the
 * others (lists): a list may not take over a slot a batch waits for, so a connection handed to a
 * list while a batch waits was ended, and the batch opened a new one (one more session counted
 * against the server, and the batch's wait lengthened by a QUIT and a connection set-up).
 *
 * Within the server's own limits: at most `perKey` parked per server (the per-server session
 * limit), each connection carrying at most `MAX_RESETS` RSETs and living at most `MAX_AGE_MS`.
 * Postfix counts RSET as a "junk" command and, after `smtpd_junk_command_limit` (100) of them
 * without mail delivered (a prober never delivers), counts each further one as an error and soon
 * slows down or hangs up; 80 leaves room for the RSETs between the domains of a session.
 */
import type { SmtpChannel } from './channel.ts';

/** The session slot a connection holds (engine/host-limiter.ts): given back once, when the connection is done with it. */
export interface HeldSlot {
  release(): void;
}

export interface ParkedSession {
  channel: SmtpChannel;
  /** EHLO keywords of the connection. */
  keywords: Set<string>;
  /** RSET commands sent on the connection so far. */
  resets: number;
  openedAt: number;
  /** The connection's session slot: passed to the session that takes it, released when it closes here. */
  slot?: HeldSlot | undefined;
}

export const MAX_RESETS = 80;
export const MAX_AGE_MS = 60_000;
/** How long a parked session waits for the server's close after QUIT. */
const QUIT_GRACE_MS = 2_000;

interface Entry {
  session: ParkedSession;
  timer: NodeJS.Timeout;
  /** Taken by a session: its slot is no longer this pool's to release. */
  taken: boolean;
}

interface Waiting {
  receive: (session: ParkedSession) => void;
  /** Work that goes first (a batch). */
  first: boolean;
}

/** A session waiting for a slot to a server: a session parked for that server meanwhile is handed to it. */
export interface IdleWaiter {
  /** Resolves with a session handed over (its slot with it); never rejects. */
  readonly handed: Promise<ParkedSession>;
  /** Stops waiting; a session handed over but not used goes back to the pool. */
  cancel(): void;
}

export class IdleSessions {
  private readonly parked = new Map<string, Entry[]>();
  private readonly waiters = new Map<string, Waiting[]>();

  constructor(
    private readonly idleMs: number,
    private readonly perKey: number,
  ) {}

  /** Whether a parked session is ready for `key` (a session would reuse it, opening no connection). */
  has(key: string): boolean {
    return (this.parked.get(key) ?? []).some(({ session }) => session.channel.reusable);
  }

  /** A parked session for `key`, with its slot (now the caller's), or undefined. */
  take(key: string): ParkedSession | undefined {
    const list = this.parked.get(key);
    while (list !== undefined && list.length > 0) {
      const entry = list.pop()!;
      clearTimeout(entry.timer);
      if (entry.session.channel.reusable) {
        entry.taken = true;
        if (list.length === 0) this.parked.delete(key);
        return entry.session;
      }
      entry.session.channel.destroy(); // its slot is released once closed (park's watcher)
    }
    this.parked.delete(key);
    return undefined;
  }

  /**
   * Parks the session (or hands it to a session waiting for `key`); false (the caller ends it and
   * keeps its slot) when reuse is off, it served enough, or `key` has enough parked.
   */
  park(key: string, session: ParkedSession): boolean {
    if (this.idleMs <= 0 || session.resets >= MAX_RESETS || Date.now() - session.openedAt > MAX_AGE_MS || !session.channel.reusable)
      return false;
    const waiting = this.waiters.get(key);
    const list = this.parked.get(key) ?? [];
    if (waiting === undefined && list.length >= this.perKey) return false;
    session.channel.rebind(undefined);
    const next = waiting?.shift()?.receive;
    if (waiting?.length === 0) this.waiters.delete(key);
    if (next !== undefined) {
      next(session);
      return true;
    }
    const entry: Entry = { session, taken: false, timer: setTimeout(() => end(session), this.idleMs) };
    entry.timer.unref();
    list.push(entry);
    this.parked.set(key, list);
    // However it closes here (idle too long, the server's close, shutdown), the slot goes back.
    void session.channel.whenClosed().then(() => {
      clearTimeout(entry.timer);
      const current = this.parked.get(key);
      const at = current?.indexOf(entry) ?? -1;
      if (at !== -1) current!.splice(at, 1);
      if (current?.length === 0) this.parked.delete(key);
      if (!entry.taken) session.slot?.release();
    });
    return true;
  }

  /** Waits for a session parked for `key` from now on (see IdleWaiter); `first`: ahead of the waiters without it. */
  wait(key: string, first = false): IdleWaiter {
    let handedOver: ParkedSession | undefined;
    let resolve: (session: ParkedSession) => void = () => {};
    const handed = new Promise<ParkedSession>((done) => (resolve = done));
    const receive = (session: ParkedSession) => {
      handedOver = session;
      resolve(session);
    };
    const list = this.waiters.get(key) ?? [];
    const waiting: Waiting = { receive, first };
    // In order of arrival within each rank.
    const behind = first ? list.findIndex((other) => !other.first) : -1;
    if (behind === -1) list.push(waiting);
    else list.splice(behind, 0, waiting);
    this.waiters.set(key, list);
    return {
      handed,
      cancel: () => {
        const current = this.waiters.get(key);
        const at = current?.indexOf(waiting) ?? -1;
        if (at !== -1) current!.splice(at, 1);
        if (current?.length === 0) this.waiters.delete(key);
        const unused = handedOver;
        handedOver = undefined;
        if (unused !== undefined && !this.park(key, unused)) this.end(unused);
      },
    };
  }

  /** Ends a session taken from here that will not be used: QUIT, then its slot goes back. */
  end(session: ParkedSession): void {
    end(session);
    void session.channel.whenClosed().then(() => session.slot?.release());
  }

  /**
   * Ends every parked session (shutdown): QUIT, and once each is closed its slot goes back, so
   * that a worker that stops leaves no slot held in Redis until its lease lapses.
   */
  async close(): Promise<void> {
    const sessions = [...this.parked.values()].flatMap((list) => list.map(({ session }) => session));
    for (const session of sessions) end(session);
    // park()'s watcher of each connection releases its slot first: it was registered earlier.
    await Promise.all(sessions.map((session) => session.channel.whenClosed()));
  }
}

/** The sessions a parked one may serve: same server, egress, HELO name and sender. */
export const idleKey = (parts: {
  host: string;
  port: number;
  socksProxy?: string | undefined;
  heloName: string;
  mailFrom: string;
}): string => [parts.socksProxy ?? 'direct', parts.host, parts.port, parts.heloName, parts.mailFrom].join('|');

function end(session: ParkedSession): void {
  session.channel.quit(QUIT_GRACE_MS);
}
