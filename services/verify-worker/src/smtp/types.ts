/** The SMTP prober's contract with its caller (the verification engine). No HTTP knowledge here. */
import type { SmtpReply } from '../checks/smtp-replies.ts';
import type { HeldSlot, IdleSessions, ParkedSession } from './idle-sessions.ts';

// The reply table (checks, the layer below) reads replies in this form; the prober hands them over in it.
export type { SmtpReply };

export interface SmtpSessionRequest {
  /** IP address to connect to, already resolved and vetted by the caller. */
  host: string;
  port: number;
  /** MX host name, for TLS SNI. */
  servername?: string;
  heloName: string;
  /** Envelope sender; ASCII; `''` sends the null sender `<>`. */
  mailFrom: string;
  /** Validated addresses (no CR/LF/<>/spaces); local parts may be non-ASCII. */
  recipients: string[];
  /** The TCP connection alone (with a SOCKS proxy: connection and proxy handshake). */
  connectTimeoutMs: number;
  /** The greeting (a server may pause it on purpose), each reply, and the TLS handshake. */
  commandTimeoutMs: number;
  /** Most RCPT commands to send in this session: the caller's politeness budget, a server's learnt recipient limit. */
  maxRecipients?: number;
  /**
   * A server known to guard against address harvesting: send one RCPT at a time (even under
   * PIPELINING) and end the session, politely, once this many recipients were refused.
   */
  rejectionCap?: number;
  /**
   * A RCPT reply that comes this much later than the replies before it, after a refusal, shows
   * a server slowing down on purpose: the session keeps that reply and ends at once, so the
   * rest can go to a fresh session instead of waiting through an ever slower one. Unset: off.
   */
  slowReplyMs?: number;
  /** Batch deadline: abort ends the session at once. */
  signal?: AbortSignal;
  /** `socks5://[user:pass@]host:port` egress. */
  socksProxy?: string;
  /** Called with the code of every reply read, for metrics. */
  onReply?: (code: number) => void;
  /**
   * Called once every connection of the session is closed, which may be after the result is
   * in (the server closes after its reply to QUIT): a server counts a connection until then.
   */
  onClosed?: () => void;
  /**
   * Idle sessions (idle-sessions.ts): a parked session to this server is taken (`RSET` first)
   * instead of a new connection, and this one is parked when it ends cleanly. Absent: QUIT.
   */
  idle?: IdleSessions;
  /** A parked session to this server (taken by the caller from `idle` with its slot): resumed with `RSET`. */
  resume?: ParkedSession;
  /**
   * The session slot the caller holds for this session (engine/host-limiter.ts): released once
   * the connection is closed, or handed with the connection when it is parked in `idle`.
   */
  slot?: HeldSlot;
}

export type SmtpStage = 'connect' | 'banner' | 'ehlo' | 'starttls' | 'mail' | 'rcpt';
export type SmtpFailureKind = 'refused' | 'timeout' | 'reply' | 'closed' | 'aborted' | 'error';

export interface SmtpFailure {
  /** Where it happened. An abort keeps the stage it interrupted (kind `aborted`). */
  stage: SmtpStage;
  kind: SmtpFailureKind;
  reply?: SmtpReply;
  detail?: string;
}

/**
 * What the session learnt. A recipient neither in `rcpt` nor in `skippedNeedsSmtpUtf8` was not
 * answered (too many recipients, a stop, a dropped connection, a timeout, an abort, MAIL refused):
 * it is worth another session.
 */
export interface SmtpSessionResult {
  failure?: SmtpFailure;
  /** In recipient order, for the recipients the server answered. */
  rcpt: Array<{ address: string; reply: SmtpReply }>;
  /** Non-ASCII addresses not sent because the server lacks SMTPUTF8: another session would not help. */
  skippedNeedsSmtpUtf8: string[];
  /** Replies read to RCPT commands, whatever they said (the server's work, for politeness accounting). */
  rcptReplies: number;
  /**
   * Why the RCPT phase ended before every recipient was answered, when the server did not end the
   * session: too many recipients (452 4.5.3, or 552 from an old server), the rejection cap, a
   * slowed reply, or the caller's `maxRecipients`.
   */
  rcptStop?: 'too_many_recipients' | 'rejection_cap' | 'slowed' | 'max_recipients';
  /** The server cut the session (421 or disconnect) after answering some recipients: the refusals it had made by then. */
  cutAfterRefusals?: number;
  /** The first slowed reply came after this many refusals. */
  slowedAfterRefusals?: number;
  /** The session ran on a parked connection (after RSET), opening none. */
  reused?: boolean;
}
