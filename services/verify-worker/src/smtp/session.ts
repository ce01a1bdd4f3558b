/**
 * One probing SMTP session: greeting, EHLO (HELO fallback), opportunistic STARTTLS, then one
 * transaction per recipient domain (RSET between them): MAIL FROM and the RCPTs (one flight under
 * PIPELINING; one at a time without it, or for a server that guards against harvesting), then
 * QUIT without waiting for its reply. A session that failed or
 * met a slowed reply closes the connection instead. Never sends DATA.
 *
 * Timing (RFC 5321 §4.5.3.2): the TCP connection has the connect timeout; the greeting and each
 * reply have the command timeout. Nothing is sent before the final line of the greeting: servers
 * pause it on purpose (`220-` at once, `220 ` seconds later) and refuse clients that talk early.
 */
import { SmtpChannel, SmtpIoError } from './channel.ts';
import { ConnectError, openConnection } from './connect.ts';
import { assertIpAddress, assertSafeHeloName, assertSafeRecipient, assertSafeSender, needsSmtpUtf8 } from './guard.ts';
import { idleKey } from './idle-sessions.ts';
import { ehloKeywords, publicReply, type ParsedReply } from './reply-parser.ts';
import type { SmtpFailure, SmtpReply, SmtpSessionRequest, SmtpSessionResult, SmtpStage } from './types.ts';

export type * from './types.ts';

/** How long a finished session waits for the server to close after QUIT before closing itself. */
const QUIT_GRACE_MS = 2000;

/** Stops the session on a reply that leaves nothing more to learn (421, refused banner, MAIL refused). */
class ReplyStop extends Error {
  constructor(readonly reply: ParsedReply) {
    super(`reply ${reply.code}`);
  }
}

/**
 * Resolves with what was learnt; rejects only on unsafe input (before any connection).
 * STARTTLS: a refused STARTTLS (454, 5xx) continues in plaintext on the same connection, as RFC 3207
 * allows; a failed TLS handshake redoes the session once in plaintext on a new connection, since
 * a probe carries no message content worth refusing to send in the clear.
 */
export async function runSmtpSession(request: SmtpSessionRequest): Promise<SmtpSessionResult> {
  assertIpAddress(request.host);
  assertSafeHeloName(request.heloName);
  assertSafeSender(request.mailFrom);
  for (const r of request.recipients) assertSafeRecipient(r);
  const first = new Session(request, true);
  await first.run();
  if (!first.retryInPlaintext || request.signal?.aborted) {
    notifyClosed(request, [first]);
    return first.result;
  }
  const second = new Session(request, false);
  await second.run();
  notifyClosed(request, [first, second]);
  return second.result;
}

/** Once every connection is closed (or parked): the slot goes back unless it went with the parked connection. */
function notifyClosed(request: SmtpSessionRequest, sessions: Session[]): void {
  const parked = sessions.some((session) => session.isParked);
  void Promise.all(sessions.map((session) => session.closed())).then(() => {
    if (!parked) request.slot?.release();
    try {
      request.onClosed?.();
    } catch {
      // A caller's bookkeeping must never break a probe.
    }
  });
}

/** Recipients by domain, each domain's in their order, domains in the order they first appear. */
function byDomain(recipients: string[]): string[][] {
  const groups = new Map<string, string[]>();
  for (const recipient of recipients) {
    const domain = recipient.slice(recipient.lastIndexOf('@') + 1).toLowerCase();
    const group = groups.get(domain) ?? [];
    group.push(recipient);
    groups.set(domain, group);
  }
  return [...groups.values()];
}

export function isTooManyRecipients(reply: SmtpReply): boolean {
  // RFC 5321 §4.5.3.1.10: 452 is right, old servers say 552; both mean "send the rest later".
  if (reply.code !== 452 && reply.code !== 552) return false;
  return reply.enhanced?.endsWith('.5.3') === true || /too many recipients/i.test(reply.text);
}

class Session {
  readonly result: SmtpSessionResult = { rcpt: [], skippedNeedsSmtpUtf8: [], rcptReplies: 0 };
  retryInPlaintext = false;
  /** RCPT replies that refused (4xx or 5xx). */
  private refusals = 0;
  /** End by closing the connection, not QUIT: replies still in flight are not worth waiting for. */
  private abandon = false;
  private stage: SmtpStage = 'connect';
  private channel: SmtpChannel | undefined;
  private toSend: string[];
  private keywords = new Set<string>();
  /** RSETs sent on this connection (a parked one's count carries on). */
  private resets = 0;
  private openedAt = Date.now();
  /** Handed to the idle sessions: not closed by this session. */
  private parked = false;

  constructor(
    private readonly req: SmtpSessionRequest,
    private readonly tlsAllowed: boolean,
  ) {
    this.toSend = [...req.recipients];
  }

  async run(): Promise<void> {
    try {
      await this.converse();
    } catch (err) {
      this.result.failure = this.toFailure(err);
    }
    this.noteCut();
    const kind = this.result.failure?.kind;
    const stop = this.result.rcptStop;
    const clean = kind === undefined && !this.abandon && (stop === undefined || stop === 'max_recipients');
    const { idle } = this.req;
    if (clean && idle !== undefined && this.tlsAllowed && this.channel !== undefined)
      this.parked = idle.park(idleKey(this.req), {
        channel: this.channel,
        keywords: this.keywords,
        resets: this.resets,
        openedAt: this.openedAt,
        slot: this.req.slot,
      });
    if (this.parked) return;
    if (this.abandon || (kind !== undefined && kind !== 'reply')) this.channel?.destroy();
    else this.channel?.quit(QUIT_GRACE_MS);
  }

  get isParked(): boolean {
    return this.parked;
  }

  closed(): Promise<void> {
    if (this.parked) return Promise.resolve();
    return this.channel?.whenClosed() ?? Promise.resolve();
  }

  /** A parked session to this server, reset for a new transaction; false when none is left or it failed (it is then closed). */
  private async resume(): Promise<boolean> {
    const parked = this.tlsAllowed ? this.req.resume : undefined;
    if (parked === undefined) return false;
    this.channel = parked.channel;
    this.channel.rebind(this.req.signal);
    this.resets = parked.resets;
    try {
      await this.reset();
    } catch {
      this.channel.destroy();
      this.channel = undefined;
      this.stage = 'connect';
      this.resets = 0;
      return false;
    }
    this.keywords = parked.keywords;
    this.openedAt = parked.openedAt;
    this.result.reused = true;
    return true;
  }

  /**
   * The server ended the session (421, or a hang-up) after answering some recipients: a guard
   * against harvesting. A refusal right before a hang-up speaks of the session (`550 too many
   * unknown recipients` and goodbye), so that recipient goes back to be asked again.
   */
  private noteCut(): void {
    const { result } = this;
    const failure = result.failure;
    if (failure === undefined || failure.stage !== 'rcpt' || result.rcpt.length === 0) return;
    if (failure.kind === 'closed' && (result.rcpt.at(-1)?.reply.code ?? 0) >= 500) {
      result.rcpt.pop();
      this.refusals--;
    }
    if (failure.kind === 'closed' || failure.reply?.code === 421) result.cutAfterRefusals = this.refusals;
  }

  private async converse(): Promise<void> {
    const { req } = this;
    const keywords = (await this.resume()) ? this.keywords : await this.connect();
    this.keywords = keywords;
    this.planRecipients(keywords.has('SMTPUTF8'));
    const pipelined = keywords.has('PIPELINING');
    const limit = Math.min(this.toSend.length, req.maxRecipients ?? Number.POSITIVE_INFINITY);
    let sent = 0;
    for (const [index, recipients] of byDomain(this.toSend).entries()) {
      if (sent >= limit) break;
      // One domain per transaction: Google answers the RCPTs of a second domain in one
      // transaction with 451 4.3.0 ("multiple destination domains per transaction is
      // unsupported"), and domains of one MX set (Workspace, gmail.com and googlemail.com) share
      // this session.
      if (index > 0) await this.reset();
      const batch = recipients.slice(0, limit - sent);
      sent += batch.length;
      if (await this.transaction(batch, pipelined, sent < limit)) return;
    }
    if (limit < this.toSend.length) this.result.rcptStop = 'max_recipients';
  }

  /** A new connection: greeting, EHLO, STARTTLS when offered. Returns the EHLO keywords. */
  private async connect(): Promise<Set<string>> {
    const { req } = this;
    const socket = await openConnection({
      host: req.host,
      port: req.port,
      timeoutMs: req.connectTimeoutMs,
      signal: req.signal,
      socksProxy: req.socksProxy,
    });
    this.channel = new SmtpChannel(socket, req.signal);
    this.openedAt = Date.now();
    this.stage = 'banner';
    const banner = await this.read(req.commandTimeoutMs);
    if (banner.code !== 220) throw new ReplyStop(banner);

    this.stage = 'ehlo';
    let keywords = await this.hello();
    if (this.tlsAllowed && keywords.has('STARTTLS')) {
      this.stage = 'starttls';
      if (await this.startTls()) {
        this.stage = 'ehlo';
        keywords = await this.hello();
      }
    }
    return keywords;
  }

  private async reset(): Promise<void> {
    this.stage = 'mail';
    this.resets++;
    const reply = await this.command('RSET');
    if (reply.code !== 250) throw new ReplyStop(reply);
  }

  /** EHLO, or HELO when EHLO is refused permanently (a pre-ESMTP server, which offers no extension). Returns EHLO keywords. */
  private async hello(): Promise<Set<string>> {
    const ehlo = await this.command(`EHLO ${this.req.heloName}`);
    if (ehlo.code === 250) return ehloKeywords(ehlo);
    if (ehlo.code < 500) throw new ReplyStop(ehlo);
    const helo = await this.command(`HELO ${this.req.heloName}`);
    if (helo.code !== 250) throw new ReplyStop(helo);
    return new Set();
  }

  /** True when upgraded. A refusal other than 421 keeps the plaintext session (RFC 3207 §4). */
  private async startTls(): Promise<boolean> {
    const reply = await this.command('STARTTLS');
    if (reply.code === 421) throw new ReplyStop(reply);
    if (reply.code !== 220) return false;
    const channel = this.requireChannel();
    try {
      await channel.startTls(this.req.servername, this.req.commandTimeoutMs);
    } catch (err) {
      if (err instanceof SmtpIoError && err.tlsHandshake) this.retryInPlaintext = true;
      throw err;
    }
    return true;
  }

  private planRecipients(smtputf8: boolean): void {
    if (smtputf8) return;
    this.result.skippedNeedsSmtpUtf8 = this.toSend.filter(needsSmtpUtf8);
    this.toSend = this.toSend.filter((a) => !needsSmtpUtf8(a));
  }

  /**
   * MAIL FROM and the RCPTs of `recipients`. Returns true when the session must end here (the
   * server's recipient limit, the rejection cap, a slowed reply); `moreAfter` says whether other
   * recipients would follow in a later transaction.
   */
  private async transaction(recipients: string[], pipelined: boolean, moreAfter: boolean): Promise<boolean> {
    const { req, result } = this;
    const channel = this.requireChannel();
    const utf8 = recipients.some(needsSmtpUtf8);
    const mail = `MAIL FROM:<${req.mailFrom}>${utf8 ? ' SMTPUTF8' : ''}\r\n`;
    // RFC 2920: MAIL and every RCPT in one flight, replies read back in order; one at a time to a guarded server.
    const window = pipelined && req.rejectionCap === undefined ? recipients.length : 1;
    let written = 0;
    let answered = 0;
    const nextRcpts = (count: number): string => {
      let lines = '';
      for (; count > 0 && written < recipients.length; count--) lines += `RCPT TO:<${recipients[written++] ?? ''}>\r\n`;
      return lines;
    };
    this.stage = 'mail';
    const mailSentAt = Date.now();
    channel.write(pipelined ? mail + nextRcpts(window) : mail);
    const mailReply = await this.read(req.commandTimeoutMs);
    if (mailReply.code < 200 || mailReply.code > 299) throw new ReplyStop(mailReply);

    this.stage = 'rcpt';
    // How long this server takes to answer before any refusal (MAIL FROM, and RCPTs answered
    // before the first refusal): the yardstick for a reply slowed on purpose after refusals. A
    // server that is slow at every reply alike is not slowing down.
    let usualMs = Date.now() - mailSentAt;
    let lastReplyAt = Date.now();
    if (!pipelined) channel.write(nextRcpts(1));
    while (answered < written) {
      const reply = await this.read(req.commandTimeoutMs);
      result.rcptReplies++;
      const gapMs = Date.now() - lastReplyAt;
      lastReplyAt = Date.now();
      if (isTooManyRecipients(reply)) {
        result.rcptStop = 'too_many_recipients';
        return true;
      }
      if (reply.code === 421) throw new ReplyStop(reply);
      const refusalsBefore = this.refusals;
      if (refusalsBefore === 0) usualMs = Math.max(usualMs, gapMs);
      result.rcpt.push({ address: recipients[answered++] ?? '', reply: publicReply(reply) });
      if (reply.code >= 400) this.refusals++;
      const more = answered < recipients.length || moreAfter;
      if (req.slowReplyMs !== undefined && refusalsBefore > 0 && gapMs > usualMs + req.slowReplyMs && more) {
        result.slowedAfterRefusals = refusalsBefore;
        result.rcptStop = 'slowed';
        this.abandon = true;
        return true;
      }
      if (req.rejectionCap !== undefined && this.refusals >= req.rejectionCap && more) {
        result.rcptStop = 'rejection_cap';
        return true;
      }
      if (window === 1) channel.write(nextRcpts(1));
    }
    return false;
  }

  private async command(line: string): Promise<ParsedReply> {
    this.requireChannel().write(`${line}\r\n`);
    return this.read(this.req.commandTimeoutMs);
  }

  private async read(timeoutMs: number): Promise<ParsedReply> {
    const reply = await this.requireChannel().read(timeoutMs);
    try {
      this.req.onReply?.(reply.code);
    } catch {
      // Metrics must never break a probe.
    }
    return reply;
  }

  private requireChannel(): SmtpChannel {
    if (!this.channel) throw new Error('no connection');
    return this.channel;
  }

  private toFailure(err: unknown): SmtpFailure {
    if (err instanceof ConnectError) return { stage: 'connect', kind: err.kind, detail: err.message };
    if (err instanceof ReplyStop) return { stage: this.stage, kind: 'reply', reply: publicReply(err.reply) };
    if (err instanceof SmtpIoError) return { stage: this.stage, kind: err.kind, detail: err.message };
    return { stage: this.stage, kind: 'error', detail: err instanceof Error ? err.message : String(err) };
  }
}
