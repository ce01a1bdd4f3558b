/**
 * Idle SMTP sessions kept open briefly for the next batch to the same server
 * (`VERIFY_SMTP_SESSION_IDLE_MS`, decisions "Politeness at volume"): a session that ended cleanly
 * is parked here instead of sending QUIT, and the next session to that server, egress, HELO name
 * and sender takes it and starts with `RSET`. The session slot (engine/host-limiter.ts) is
 * given back when a session is parked, and a session takes a parked one only once it holds a
 * slot, so that the connections open to a server never exceed the slots. Within the server's own limits: at most `perKey`
 * parked per server (the per-server session limit), each reused at most `MAX_USES` times and for
 * at most `MAX_AGE_MS` (servers end long sessions themselves: Postfix after 100 transactions or
 * its idle timeout of 300 s), and a parked session the server closed is dropped.
 */
import type { SmtpChannel } from './channel.ts';

export interface ParkedSession {
  channel: SmtpChannel;
  /** EHLO keywords of the connection. */
  keywords: Set<string>;
  /** Sessions the connection carried. */
  uses: number;
  openedAt: number;
}

export const MAX_USES = 20;
export const MAX_AGE_MS = 60_000;
/** How long a parked session waits for the server's close after QUIT. */
const QUIT_GRACE_MS = 2_000;

export class IdleSessions {
  private readonly parked = new Map<string, Array<{ session: ParkedSession; timer: NodeJS.Timeout }>>();

  constructor(
    private readonly idleMs: number,
    private readonly perKey: number,
  ) {}

  /** Whether a parked session is ready for `key` (a session would reuse it, opening no connection). */
  has(key: string): boolean {
    return (this.parked.get(key) ?? []).some(({ session }) => session.channel.reusable);
  }

  take(key: string): ParkedSession | undefined {
    const list = this.parked.get(key);
    while (list !== undefined && list.length > 0) {
      const { session, timer } = list.pop()!;
      clearTimeout(timer);
      if (session.channel.reusable) {
        if (list.length === 0) this.parked.delete(key);
        return session;
      }
      session.channel.destroy();
    }
    this.parked.delete(key);
    return undefined;
  }

  /** Parks the session; false (the caller ends it) when reuse is off, it served enough, or `key` has enough parked. */
  park(key: string, session: ParkedSession): boolean {
    if (this.idleMs <= 0 || session.uses >= MAX_USES || Date.now() - session.openedAt > MAX_AGE_MS || !session.channel.reusable)
      return false;
    const list = this.parked.get(key) ?? [];
    if (list.length >= this.perKey) return false;
    session.channel.rebind(undefined);
    const entry = {
      session,
      timer: setTimeout(() => {
        const at = list.indexOf(entry);
        if (at !== -1) list.splice(at, 1);
        if (list.length === 0 && this.parked.get(key) === list) this.parked.delete(key);
        end(session);
      }, this.idleMs),
    };
    entry.timer.unref();
    list.push(entry);
    this.parked.set(key, list);
    return true;
  }

  /** Ends every parked session (shutdown). */
  close(): void {
    for (const list of this.parked.values())
      for (const { session, timer } of list) {
        clearTimeout(timer);
        end(session);
      }
    this.parked.clear();
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
