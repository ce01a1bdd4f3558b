/**
 * Scripted SMTP server for tests and benchmarks. Each behaviour is one real mail servers show.
 * Several run on 127.0.0.2, 127.0.0.3, ... on ONE port, since the verifier probes a single port.
 */
import net from 'node:net';
import { StringDecoder } from 'node:string_decoder';
import { setTimeout as sleep } from 'node:timers/promises';
import tls from 'node:tls';
import { rigCertificate } from './certificate.ts';

export { rigCertificate, selfSignedCertificate } from './certificate.ts';

/** `text` may start with an enhanced code; `\n` in it makes a multi-line reply. */
export interface RigReply {
  code: number;
  text: string;
}

export type MailboxBehaviour = 'accept' | 'unknown' | 'full' | 'disabled' | 'policy' | 'greylist' | RigReply;
export type RigStage = 'banner' | 'ehlo' | 'starttls' | 'mail' | 'rcpt' | 'quit';

export interface SmtpServerScript {
  /** Name in the banner and EHLO reply. */
  hostname?: string;
  /** Accept the TCP connection, then close it (FIN) or reset it (RST) at once. To refuse at TCP level, start no server on that address. */
  refuse?: 'close' | 'reset';
  /** Default `220 <hostname> ESMTP`; any other code closes the connection after it (like 421). */
  banner?: RigReply;
  /**
   * Clients by peer address that get `reply` as their greeting (then the connection is closed),
   * as a server that finds the client's address on a blocklist does. `reply` default:
   * `554 5.7.1 Service unavailable; Client host [<address>] blocked using zen.spamhaus.org`.
   */
  refuseFrom?: { addresses: string[]; reply?: RigReply };
  /**
   * Never answer at that stage, or answer `delayMs` late: counted from each command's arrival
   * (pipelined replies overlap), or with `serial` one after the other (a server that sleeps
   * before each answer, so pipelined replies come `delayMs` apart).
   */
  tarpit?: { at: RigStage; delayMs?: number; serial?: boolean };
  /** `reject`: EHLO gets `500 5.5.1`, only HELO works. */
  ehlo?: 'accept' | 'reject';
  pipelining?: boolean; // default true
  smtputf8?: boolean; // default false
  /** `broken`: answers 220 to STARTTLS, then sends garbage instead of a TLS handshake. */
  starttls?: 'off' | 'offered' | 'required' | 'broken'; // default off
  /** Refuse STARTTLS with this reply (e.g. 454 4.7.0). */
  starttlsReply?: RigReply;
  /** Accepted mailboxes (case-insensitive); everything else is unknown unless catchAll. */
  users?: string[];
  mailboxes?: Record<string, MailboxBehaviour>;
  catchAll?: boolean;
  /** `451 4.7.1` for the first attempt of each (sender, recipient) pair, or until minDelayMs passed. */
  greylist?: boolean | { minDelayMs: number };
  /** Answer MAIL FROM with this (e.g. `550 5.7.1 Client host blocked using zen.spamhaus.org`). */
  mailFromReply?: RigReply;
  /** Answer every RCPT with this (policy block). */
  rcptReply?: RigReply;
  /** `452 4.5.3 Too many recipients` after this many RCPTs in one transaction. */
  maxRecipients?: number;
  /** Close the connection when RCPT number N+1 arrives (after answering N). */
  dropAfterRcpts?: number;
  /** Each reply this long after its own command arrived (pipelined replies overlap), order kept. */
  replyDelayMs?: number;
  /** Default replyDelayMs. */
  bannerDelayMs?: number;
  /**
   * A greeting pause, as Postfix's postscreen makes: `220-` at once, the final `220 ` line this
   * much later. A client that sends anything before the final line gets `521 5.5.1` and is cut.
   */
  greetingPauseMs?: number;
  /** The first `connections` connections get this at the greeting (default `421 4.7.0 ... try again later`), then are closed. */
  greetingTempfail?: { connections: number; reply?: RigReply };
  /** Anti-harvesting: after this many refused RCPTs in one connection, the next RCPT gets `reply` (default 421 4.7.0) and the connection is closed. */
  harvestGuard?: { afterRejections: number; reply?: RigReply };
  /** Anti-harvesting: each RCPT reply waits this long times the RCPTs refused so far in the connection, one after the other (a server that sleeps before it answers). */
  slowdown?: { perRejectionMs: number };
  /** Reply to RCPT for a mailbox that does not exist (default Postfix's `550 5.1.1 ... User unknown`). */
  unknownReply?: RigReply;
  /** Domains this server takes mail for; RCPTs to others get `relayReply` (a host that is not the domain's mail server). Default: all. */
  localDomains?: string[];
  /** Default `553 sorry, that domain isn't in my list of allowed recipient hosts`. */
  relayReply?: RigReply;
  /**
   * As Google's servers: a RCPT to a domain other than the transaction's first recipient's gets
   * `451 4.3.0 Multiple destination domains per transaction is unsupported. Please try again.`
   */
  oneDomainPerTransaction?: boolean;
  /** A provider's rate limit shared by its MX hosts (createRigThrottle). */
  throttle?: ReturnType<typeof createRigThrottle>;
}

/**
 * A large provider's rate limit, shared by all its MX hosts (give the same object to each
 * server): at most `perWindow` RCPTs per client address in any `windowMs`; the RCPT beyond it
 * gets `reply` (default Gmail's `421-4.7.28 ... unusual rate`) and the connection is closed, and
 * the client is blocked for `blockMs`: each connection it opens meanwhile gets `reply` at the
 * greeting and re-arms the block, as the providers' throttles do.
 */
export interface RigThrottle {
  readonly perWindow: number;
  readonly windowMs: number;
  readonly blockMs: number;
  readonly reply: RigReply;
  /** Throttle replies sent (at a RCPT or at the greeting). */
  readonly replies: number;
  /** Connections opened while the client was blocked. */
  readonly connectionsWhileBlocked: number;
  /** Whether the client is blocked now. */
  blocked(client: string): boolean;
  /** Blocks the client now, as an earlier burst from its address would have. */
  block(client: string): void;
}

export function createRigThrottle(options: { perWindow: number; windowMs?: number; blockMs?: number; reply?: RigReply }): RigThrottle & {
  /** The RCPT (true: over the limit, client blocked now) and the greeting (true: blocked, re-armed). */
  countRcpt(client: string): boolean;
  atGreeting(client: string): boolean;
} {
  const windowMs = options.windowMs ?? 60_000;
  const blockMs = options.blockMs ?? windowMs;
  const seen = new Map<string, number[]>();
  const blockedUntil = new Map<string, number>();
  const state = {
    perWindow: options.perWindow,
    windowMs,
    blockMs,
    reply: options.reply ?? {
      code: 421,
      text:
        '4.7.28 Gmail has detected an unusual rate of unsolicited mail originating from your IP address.\n' +
        '4.7.28 To protect our users from spam, mail sent from your IP address has been temporarily rate limited.',
    },
    replies: 0,
    connectionsWhileBlocked: 0,
    blocked: (client: string) => (blockedUntil.get(client) ?? 0) > Date.now(),
    block: (client: string) => void blockedUntil.set(client, Date.now() + blockMs),
    countRcpt(client: string): boolean {
      const now = Date.now();
      if (state.blocked(client)) {
        blockedUntil.set(client, now + blockMs);
        state.replies++;
        return true;
      }
      const times = (seen.get(client) ?? []).filter((at) => at > now - windowMs);
      if (times.length >= options.perWindow) {
        blockedUntil.set(client, now + blockMs);
        seen.set(client, times);
        state.replies++;
        return true;
      }
      times.push(now);
      seen.set(client, times);
      return false;
    },
    atGreeting(client: string): boolean {
      if (!state.blocked(client)) return false;
      blockedUntil.set(client, Date.now() + blockMs);
      state.connectionsWhileBlocked++;
      state.replies++;
      return true;
    },
  };
  return state;
}

export interface TranscriptEntry {
  dir: 'in' | 'out';
  line: string;
  at: number;
  tls: boolean;
}

export interface RigSmtpServer {
  readonly host: string;
  readonly port: number;
  /** The live script: tests may change it between sessions. */
  script: SmtpServerScript;
  readonly connections: number;
  /** Connections that sent EHLO or HELO. */
  readonly sessions: number;
  /** MAIL FROM commands accepted. */
  readonly transactions: number;
  readonly open: number;
  readonly maxOpen: number;
  /** RCPT commands received (read from the socket), and RCPT commands answered. */
  readonly rcptReceived: number;
  readonly rcptAnswered: number;
  /** Connections that spoke before the final greeting line. */
  readonly earlyTalkers: number;
  /** Every command line received, per connection. */
  readonly commands: string[][];
  readonly transcripts: TranscriptEntry[][];
  close(): Promise<void>;
}

const MAX_LINE = 4096;

/** `port: 0` picks a free port (read it back from `port`). */
export async function startSmtpServer(options: SmtpServerScript & { host: string; port: number }): Promise<RigSmtpServer> {
  const { host, port, ...script } = options;
  const sockets = new Set<net.Socket>();
  const greylist = new Map<string, number>();
  const commands: string[][] = [];
  const transcripts: TranscriptEntry[][] = [];
  // The counters are plain fields, written here and by each connection; RigSmtpServer shows them read-only.
  const rig = {
    host,
    port,
    script,
    commands,
    transcripts,
    connections: 0,
    sessions: 0,
    transactions: 0,
    open: 0,
    maxOpen: 0,
    rcptReceived: 0,
    rcptAnswered: 0,
    earlyTalkers: 0,
    close: (): Promise<void> =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  const server = net.createServer((socket) => {
    rig.connections++;
    rig.open++;
    rig.maxOpen = Math.max(rig.maxOpen, rig.open);
    sockets.add(socket);
    // Small replies written one by one must not wait for the client's delayed ACK (Nagle).
    socket.setNoDelay(true);
    socket.on('close', () => {
      rig.open--;
      sockets.delete(socket);
    });
    socket.on('error', () => {});
    const log: TranscriptEntry[] = [];
    transcripts.push(log);
    commands.push([]);
    new RigConnection(socket, rig.script, {
      log,
      commands: commands[commands.length - 1] ?? [],
      greylist,
      stats: rig,
      index: rig.connections,
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const bound = server.address();
  if (typeof bound === 'object' && bound) rig.port = bound.port;
  return rig;
}

/** A port free on every given address (127.0.0.x), for servers that must share one port. */
export async function findFreePort(hosts: string[]): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, hosts[0] ?? '127.0.0.1', resolve));
    const address = probe.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const others = hosts.slice(1).map(() => net.createServer());
    const ok = await Promise.all(
      others.map(
        (s, i) => new Promise<boolean>((resolve) => s.once('error', () => resolve(false)).listen(port, hosts[i + 1], () => resolve(true))),
      ),
    );
    await Promise.all([probe, ...others].map((s) => new Promise<void>((resolve) => (s.listening ? s.close(() => resolve()) : resolve()))));
    if (ok.every(Boolean)) return port;
  }
  throw new Error(`no port free on all of ${hosts.join(', ')}`);
}

interface ConnectionContext {
  log: TranscriptEntry[];
  commands: string[];
  greylist: Map<string, number>;
  stats: { sessions: number; transactions: number; rcptReceived: number; rcptAnswered: number; earlyTalkers: number };
  /** 1 for the server's first connection. */
  index: number;
}

/** `rcpt` marks the answer to a RCPT command (counted in `rcptAnswered`). */
type Action =
  | { reply: RigReply; rcpt?: true; /** more lines of this reply follow later (`220-`) */ continues?: true }
  | { close: true }
  | { tls: 'ok' | 'broken' }
  | { greeted: true };

/** One connection: commands are handled when they arrive; their replies go out in order, each when due. */
class RigConnection {
  private socket: net.Socket;
  private buffer = '';
  private readonly decoder = new StringDecoder('utf8');
  private closing = false;
  private out: Promise<void> = Promise.resolve();
  private readonly done = new AbortController();
  private greeted = false;
  private counted = false;
  private secure = false;
  private upgrading = false;
  private sender: string | undefined;
  private utf8 = false;
  private rcptCount = 0;
  /** The domain of the transaction's first recipient. */
  private transactionDomain: string | undefined;
  /** RCPTs refused (4xx/5xx) in this connection, for the harvest guards. */
  private refusals = 0;
  /** False while a greeting pause lasts: talking then is refused. */
  private greetingSent = true;
  private readonly name: string;
  private readonly peer: string;
  /** The throttle cut this connection: what the client pipelined after it is not read. */
  private cut = false;

  constructor(
    socket: net.Socket,
    private readonly script: SmtpServerScript,
    private readonly ctx: ConnectionContext,
  ) {
    this.socket = socket;
    this.name = script.hostname ?? 'mx.rig.test';
    this.peer = (socket.remoteAddress ?? '').replace(/^::ffff:/, '');
    socket.once('close', () => this.done.abort());
    if (script.refuse) {
      if (script.refuse === 'reset') socket.resetAndDestroy();
      else socket.end();
      return;
    }
    socket.on('data', this.onData);
    const tempfail = script.greetingTempfail;
    const peer = (socket.remoteAddress ?? '').replace(/^::ffff:/, '');
    const listed = script.refuseFrom?.addresses.includes(peer) === true;
    const throttle = script.throttle;
    const throttled = throttle !== undefined && throttle.atGreeting(peer) ? throttle.reply : undefined;
    const banner = throttled
      ? throttled
      : listed
        ? (script.refuseFrom?.reply ?? {
            code: 554,
            text: `5.7.1 Service unavailable; Client host [${peer}] blocked using zen.spamhaus.org`,
          })
        : tempfail !== undefined && ctx.index <= tempfail.connections
          ? (tempfail.reply ?? { code: 421, text: `4.7.0 ${this.name} Service not available, try again later` })
          : (script.banner ?? { code: 220, text: `${this.name} ESMTP rig` });
    if (script.greetingPauseMs !== undefined && banner.code === 220) this.pausedGreeting(banner, script.greetingPauseMs);
    else
      this.schedule(Date.now(), 'banner', script.bannerDelayMs, [
        { reply: banner },
        ...(banner.code === 220 ? [] : [{ close: true } as const]),
      ]);
  }

  /** `220-` at once, the final `220 ` line after the pause; whoever talks in between is refused. */
  private pausedGreeting(banner: RigReply, pauseMs: number): void {
    this.greetingSent = false;
    this.schedule(Date.now(), undefined, 0, [{ reply: { code: 220, text: `${this.name} ESMTP greeting pause` }, continues: true }]);
    this.schedule(Date.now(), 'banner', pauseMs, [{ reply: banner }, { greeted: true }]);
  }

  private readonly onData = (chunk: Buffer): void => {
    this.buffer += this.decoder.write(chunk);
    if (this.buffer.length > 64 * 1024) {
      this.socket.destroy();
      return;
    }
    for (let nl = this.buffer.indexOf('\n'); nl !== -1 && !this.upgrading; nl = this.buffer.indexOf('\n')) {
      const line = this.buffer.slice(0, nl).replace(/\r$/, '');
      this.buffer = this.buffer.slice(nl + 1);
      this.record(line);
      if (!this.greetingSent) return this.refuseEarlyTalker();
      if (line.length > MAX_LINE) this.schedule(Date.now(), undefined, undefined, [{ reply: { code: 500, text: '5.5.2 Line too long' } }]);
      else this.handle(line);
    }
    // RFC 3207 §5: plaintext sent after STARTTLS must not be acted upon; it is recorded, then dropped.
    if (this.upgrading && this.buffer !== '') {
      for (const line of this.buffer.split(/\r?\n/).filter(Boolean)) this.record(line);
      this.buffer = '';
    }
  };

  private refuseEarlyTalker(): void {
    this.ctx.stats.earlyTalkers++;
    // The pending greeting is dropped with the connection (its sleep ends when the socket closes).
    this.socket.off('data', this.onData);
    void this.perform({ reply: { code: 521, text: '5.5.1 Protocol error: talking before the greeting' } }).then(() =>
      this.perform({ close: true }),
    );
  }

  private record(line: string): void {
    this.ctx.commands.push(line);
    this.ctx.log.push({ dir: 'in', line, at: Date.now(), tls: this.secure });
  }

  private handle(line: string): void {
    if (this.cut) return;
    const now = Date.now();
    const verb = (line.split(' ')[0] ?? '').toUpperCase();
    const answer = (stage: RigStage | undefined, ...actions: Action[]): void => this.schedule(now, stage, undefined, actions);
    const reply = (code: number, text: string): Action => ({ reply: { code, text } });
    switch (verb) {
      case 'EHLO':
        this.hello();
        if (this.script.ehlo === 'reject') return answer('ehlo', reply(500, '5.5.1 Command unrecognized'));
        return answer('ehlo', reply(250, this.ehloLines().join('\n')));
      case 'HELO':
        this.hello();
        return answer('ehlo', reply(250, this.name));
      case 'STARTTLS': {
        const mode = this.script.starttls ?? 'off';
        if (mode === 'off' || this.secure || this.script.ehlo === 'reject')
          return answer('starttls', reply(502, '5.5.1 STARTTLS not available'));
        if (this.script.starttlsReply) return answer('starttls', { reply: this.script.starttlsReply });
        this.upgrading = true;
        this.socket.pause();
        return answer('starttls', reply(220, '2.0.0 Ready to start TLS'), { tls: mode === 'broken' ? 'broken' : 'ok' });
      }
      case 'MAIL':
        return answer('mail', ...this.mail(line));
      case 'RCPT': {
        this.ctx.stats.rcptReceived++;
        const actions = this.rcpt(line);
        const slow = this.script.slowdown === undefined ? 0 : this.refusals * this.script.slowdown.perRejectionMs;
        const tarpit = this.script.tarpit;
        const serial = tarpit?.at === 'rcpt' && tarpit.serial === true ? (tarpit.delayMs ?? 0) : 0;
        const refused = actions.some((a) => 'reply' in a && a.reply.code >= 400);
        if (refused) this.refusals++;
        return this.schedule(now, serial > 0 ? undefined : 'rcpt', undefined, actions, slow + serial);
      }
      case 'RSET':
        this.sender = undefined;
        this.transactionDomain = undefined;
        return answer(undefined, reply(250, '2.0.0 OK'));
      case 'NOOP':
        return answer(undefined, reply(250, '2.0.0 OK'));
      case 'QUIT':
        return answer('quit', reply(221, '2.0.0 Bye'), { close: true });
      default:
        return answer(undefined, reply(502, '5.5.2 Command not recognized'));
    }
  }

  private hello(): void {
    if (!this.counted) this.ctx.stats.sessions++;
    this.counted = true;
    this.greeted = true;
    this.sender = undefined;
  }

  private ehloLines(): string[] {
    const s = this.script;
    const offerTls = (s.starttls ?? 'off') !== 'off' && !this.secure;
    return [
      this.name,
      ...(s.pipelining === false ? [] : ['PIPELINING']),
      'SIZE 35882577',
      ...(offerTls ? ['STARTTLS'] : []),
      'ENHANCEDSTATUSCODES',
      '8BITMIME',
      ...(s.smtputf8 ? ['SMTPUTF8'] : []),
    ];
  }

  private mail(line: string): Action[] {
    const m = /^MAIL FROM:<([^>]*)>(.*)$/i.exec(line);
    const r = (code: number, text: string): Action[] => [{ reply: { code, text } }];
    if (!this.greeted) return r(503, '5.5.1 Send HELO/EHLO first');
    if (!m) return r(501, '5.5.4 Syntax: MAIL FROM:<address>');
    if (this.script.starttls === 'required' && !this.secure) return r(530, '5.7.0 Must issue a STARTTLS command first');
    if (this.script.mailFromReply) return [{ reply: this.script.mailFromReply }];
    const utf8 = /\bSMTPUTF8\b/i.test(m[2] ?? '');
    if (utf8 && !this.script.smtputf8) return r(555, '5.5.4 Unsupported option: SMTPUTF8');
    this.sender = m[1] ?? '';
    this.utf8 = utf8;
    this.rcptCount = 0;
    this.transactionDomain = undefined;
    this.ctx.stats.transactions++;
    return r(250, '2.1.0 Ok');
  }

  private rcpt(line: string): Action[] {
    const m = /^RCPT TO:<([^>]*)>/i.exec(line);
    const r = (code: number, text: string): Action[] => [{ reply: { code, text }, rcpt: true }];
    const s = this.script;
    if (this.sender === undefined) return r(503, '5.5.1 Need MAIL command');
    if (!m) return r(501, '5.5.4 Syntax: RCPT TO:<address>');
    const address = (m[1] ?? '').toLowerCase();
    this.rcptCount++;
    if (s.dropAfterRcpts !== undefined && this.rcptCount > s.dropAfterRcpts) return [{ close: true }];
    if (s.harvestGuard !== undefined && this.refusals >= s.harvestGuard.afterRejections) {
      const reply = s.harvestGuard.reply ?? { code: 421, text: '4.7.0 Too many invalid recipients, closing connection' };
      return [{ reply, rcpt: true }, { close: true }];
    }
    if (s.maxRecipients !== undefined && this.rcptCount > s.maxRecipients) return r(452, '4.5.3 Too many recipients');
    if (s.throttle?.countRcpt(this.peer) === true) {
      this.cut = true;
      return [{ reply: s.throttle.reply, rcpt: true }, { close: true }];
    }
    if (/[^\u0020-\u007e]/.test(address) && !this.utf8) return r(553, '5.6.7 Non-ASCII address needs SMTPUTF8');
    if (s.rcptReply) return [{ reply: s.rcptReply, rcpt: true }];
    const domain = address.slice(address.lastIndexOf('@') + 1);
    this.transactionDomain ??= domain;
    if (s.oneDomainPerTransaction === true && domain !== this.transactionDomain)
      return r(451, '4.3.0 Multiple destination domains per transaction is unsupported. Please try again.');
    if (s.localDomains !== undefined && !s.localDomains.includes(domain))
      return [{ reply: s.relayReply ?? { code: 553, text: "sorry, that domain isn't in my list of allowed recipient hosts" }, rcpt: true }];
    if (this.greylisted(address)) return r(451, '4.7.1 Greylisted, please try again later');
    const behaviour = s.mailboxes?.[address] ?? (s.users?.some((u) => u.toLowerCase() === address) || s.catchAll ? 'accept' : 'unknown');
    return [{ reply: behaviour === 'unknown' && s.unknownReply ? s.unknownReply : mailboxReply(behaviour, address), rcpt: true }];
  }

  private greylisted(address: string): boolean {
    const g = this.script.greylist;
    if (!g) return false;
    const key = `${this.sender}|${address}`;
    const first = this.ctx.greylist.get(key);
    if (first === undefined) this.ctx.greylist.set(key, Date.now());
    return first === undefined || (typeof g === 'object' && Date.now() - first < g.minDelayMs);
  }

  /** `serialMs` is slept after the previous reply went out (a server that sleeps before answering), on top of the due time. */
  private schedule(arrival: number, stage: RigStage | undefined, delayMs: number | undefined, actions: Action[], serialMs = 0): void {
    const tarpit = stage && this.script.tarpit?.at === stage ? this.script.tarpit : undefined;
    const due = arrival + (delayMs ?? this.script.replyDelayMs ?? 0) + (tarpit?.delayMs ?? 0);
    const signal = this.done.signal;
    this.out = this.out
      .then(async () => {
        if (tarpit && tarpit.delayMs === undefined) await new Promise((resolve) => signal.addEventListener('abort', resolve));
        if (serialMs > 0) await sleep(serialMs, undefined, { signal, ref: false });
        const wait = due - Date.now();
        if (wait > 0) await sleep(wait, undefined, { signal, ref: false });
        for (const action of actions) if (!signal.aborted && !this.closing) await this.perform(action);
      })
      .catch(() => {});
  }

  private async perform(action: Action): Promise<void> {
    if ('reply' in action) {
      const lines = action.reply.text.split('\n');
      const last = 'continues' in action ? lines.length : lines.length - 1;
      const text = lines.map((l, i) => `${action.reply.code}${i < last ? '-' : ' '}${l}`);
      for (const line of text) this.ctx.log.push({ dir: 'out', line, at: Date.now(), tls: this.secure });
      if (action.rcpt) this.ctx.stats.rcptAnswered++;
      this.socket.write(text.map((l) => `${l}\r\n`).join(''));
    } else if ('greeted' in action) {
      this.greetingSent = true;
    } else if ('close' in action) {
      this.closing = true;
      this.socket.end();
    } else if (action.tls === 'broken') {
      // Answers the client's TLS hello with garbage, like a server whose TLS stack is misconfigured.
      this.closing = true;
      this.socket
        .off('data', this.onData)
        .once('data', () => this.socket.end('this is not a TLS handshake\r\n'))
        .resume();
    } else {
      await this.upgrade();
    }
  }

  private async upgrade(): Promise<void> {
    const plain = this.socket;
    plain.off('data', this.onData);
    const secure = new tls.TLSSocket(plain, { isServer: true, ...rigCertificate() });
    secure.on('error', () => plain.destroy());
    this.socket = secure;
    await new Promise<void>((resolve) => secure.once('secure', resolve).once('close', resolve));
    this.secure = true;
    this.upgrading = false;
    this.greeted = false;
    this.sender = undefined;
    secure.on('data', this.onData);
  }
}

function mailboxReply(behaviour: MailboxBehaviour, address: string): RigReply {
  if (typeof behaviour === 'object') return behaviour;
  const replies: Record<Exclude<MailboxBehaviour, RigReply>, RigReply> = {
    accept: { code: 250, text: '2.1.5 Ok' },
    unknown: { code: 550, text: `5.1.1 <${address}>: Recipient address rejected: User unknown in virtual mailbox table` },
    full: { code: 552, text: '5.2.2 Mailbox full' },
    disabled: { code: 550, text: '5.2.1 Mailbox disabled, not accepting messages' },
    policy: { code: 550, text: '5.7.1 Recipient rejected by policy' },
    greylist: { code: 451, text: '4.7.1 Greylisted, please try again later' },
  };
  return replies[behaviour];
}
