/** One SMTP connection: writes commands, hands out replies in order, each read bounded by a timeout. */
import net from 'node:net';
import tls from 'node:tls';
import { ReplyParser, SmtpProtocolError, type ParsedReply } from './reply-parser.ts';

export type IoFailureKind = 'timeout' | 'closed' | 'aborted' | 'error';

export class SmtpIoError extends Error {
  constructor(
    readonly kind: IoFailureKind,
    message: string,
    /** The TLS handshake itself failed: the server may still talk plaintext on a new connection. */
    readonly tlsHandshake = false,
  ) {
    super(message);
  }
}

interface Waiter {
  resolve: (reply: ParsedReply) => void;
  reject: (err: SmtpIoError) => void;
}

export class SmtpChannel {
  private parser = new ReplyParser();
  private queue: ParsedReply[] = [];
  private waiter: Waiter | undefined;
  private ended: SmtpIoError | undefined;
  private plain: net.Socket | undefined;
  /** `whenClosed`'s promise for the current socket. */
  private closing: { socket: net.Socket; closed: Promise<void> } | undefined;
  private readonly onAbort = (): void => this.fail(new SmtpIoError('aborted', 'aborted'));
  private readonly onData = (chunk: Buffer): void => this.receive(chunk);
  private readonly onEnd = (): void => this.fail(new SmtpIoError('closed', 'connection closed by the server'));
  private readonly onError = (err: NodeJS.ErrnoException): void => {
    const dropped = err.code === 'ECONNRESET' || err.code === 'EPIPE';
    this.fail(new SmtpIoError(dropped ? 'closed' : 'error', err.code ?? err.message));
  };

  constructor(
    private socket: net.Socket,
    private signal?: AbortSignal,
  ) {
    this.attach(socket);
    if (signal?.aborted) this.onAbort();
    else signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  read(timeoutMs: number): Promise<ParsedReply> {
    const next = this.queue.shift();
    if (next) return Promise.resolve(next);
    if (this.ended) return Promise.reject(this.ended);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = undefined;
        reject(new SmtpIoError('timeout', `no reply within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiter = {
        resolve: (r) => {
          clearTimeout(timer);
          resolve(r);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
    });
  }

  write(data: string): void {
    if (!this.ended && !this.socket.destroyed) this.socket.write(data);
  }

  /** Upgrades after a 220 to STARTTLS. Certificates are not checked: a probe sends no message content. */
  async startTls(servername: string | undefined, timeoutMs: number): Promise<void> {
    // Bytes already past the 220 were sent before the handshake: a command-injection attempt (CVE-2011-0411 family).
    if (this.queue.length > 0 || this.parser.pending) throw new SmtpIoError('error', 'data received after the STARTTLS reply');
    if (this.ended) throw this.ended;
    const plain = this.socket;
    this.plain = plain;
    this.detach(plain);
    plain.on('error', () => {}); // the TLS socket reports the same failure
    const secure = tls.connect({
      socket: plain,
      rejectUnauthorized: false,
      ...(servername && !net.isIP(servername) ? { servername } : {}),
    });
    this.socket = secure;
    await new Promise<void>((resolve, reject) => {
      const done = (err?: SmtpIoError): void => {
        clearTimeout(timer);
        this.signal?.removeEventListener('abort', onAbort);
        secure.off('secureConnect', onSecure).off('error', onError).off('close', onClose);
        if (err) {
          secure.destroy();
          reject(err);
        } else resolve();
      };
      const onSecure = (): void => done();
      const onError = (err: Error): void => done(new SmtpIoError('error', `TLS handshake: ${err.message}`, true));
      const onClose = (): void => done(new SmtpIoError('closed', 'TLS handshake: connection closed', true));
      const onAbort = (): void => done(new SmtpIoError('aborted', 'aborted'));
      const timer = setTimeout(() => done(new SmtpIoError('timeout', `TLS handshake over ${timeoutMs} ms`, true)), timeoutMs);
      this.signal?.addEventListener('abort', onAbort, { once: true });
      secure.once('secureConnect', onSecure).once('error', onError).once('close', onClose);
    }).catch((err: unknown) => {
      this.ended = err instanceof SmtpIoError ? err : new SmtpIoError('error', String(err));
      this.release();
      throw err;
    });
    this.attach(secure);
  }

  /** Whether the connection is open with nothing unread: it may carry another session (idle-sessions.ts). */
  get reusable(): boolean {
    return this.ended === undefined && !this.socket.destroyed && this.queue.length === 0 && !this.parser.pending;
  }

  /**
   * Parks the connection between two sessions (`signal` undefined: it ends with no batch, and the
   * socket keeps no process alive) or hands it to the next session's signal.
   */
  rebind(signal: AbortSignal | undefined): void {
    this.signal?.removeEventListener('abort', this.onAbort);
    this.signal = signal;
    if (signal === undefined) this.socket.unref();
    else {
      this.socket.ref();
      if (signal.aborted) this.onAbort();
      else signal.addEventListener('abort', this.onAbort, { once: true });
    }
  }

  /** Sends QUIT and lets go: the caller has what it needs, the 221 is not awaited. */
  quit(graceMs: number): void {
    if (this.ended || this.socket.destroyed) return this.destroy();
    this.socket.write('QUIT\r\n');
    this.socket.end();
    this.ended = new SmtpIoError('closed', 'session over');
    this.signal?.removeEventListener('abort', this.onAbort);
    // 'close' follows the server's own close after 221; the timer covers a server that never closes.
    const timer = setTimeout(() => this.destroy(), graceMs).unref();
    this.socket.once('close', () => clearTimeout(timer));
  }

  destroy(): void {
    this.ended ??= new SmtpIoError('closed', 'session over');
    this.release();
  }

  /** Resolves once the connection is closed: after QUIT, by the server's close or the grace timer; at once after destroy. */
  whenClosed(): Promise<void> {
    const socket = this.socket;
    if (socket.closed) return Promise.resolve();
    // One listener however often it is asked: a connection parked and taken many times asks each time.
    if (this.closing?.socket !== socket) this.closing = { socket, closed: new Promise((resolve) => socket.once('close', () => resolve())) };
    return this.closing.closed;
  }

  private release(): void {
    this.signal?.removeEventListener('abort', this.onAbort);
    this.socket.destroy();
    this.plain?.destroy();
  }

  private attach(socket: net.Socket): void {
    socket.on('data', this.onData).on('end', this.onEnd).on('close', this.onEnd).on('error', this.onError);
  }

  private detach(socket: net.Socket): void {
    socket.off('data', this.onData).off('end', this.onEnd).off('close', this.onEnd).off('error', this.onError);
  }

  private receive(chunk: Buffer): void {
    if (this.ended) return;
    let replies: ParsedReply[];
    try {
      replies = this.parser.push(chunk);
    } catch (err) {
      const message = err instanceof SmtpProtocolError ? err.message : String(err);
      return this.fail(new SmtpIoError('error', `protocol: ${message}`));
    }
    for (const reply of replies) {
      const waiter = this.waiter;
      this.waiter = undefined;
      if (waiter) waiter.resolve(reply);
      else this.queue.push(reply);
    }
  }

  private fail(err: SmtpIoError): void {
    if (this.ended) return;
    this.ended = err;
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.reject(err);
    this.release();
  }
}
