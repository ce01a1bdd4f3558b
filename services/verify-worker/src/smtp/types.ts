/** The SMTP prober's contract with its caller (the verification engine). No HTTP knowledge here. */

export interface SmtpReply {
  code: number;
  /** RFC 3463 enhanced status code (`5.1.1`), when the reply carries one whose class matches `code`. */
  enhanced?: string;
  /** Text of all lines, enhanced codes removed, control characters dropped, joined by one space. */
  text: string;
}

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
  /** TCP connect + banner. */
  connectTimeoutMs: number;
  /** Each reply (and the TLS handshake). */
  commandTimeoutMs: number;
  /** Batch deadline: abort ends the session at once. */
  signal?: AbortSignal;
  /** `socks5://[user:pass@]host:port` egress. */
  socksProxy?: string;
  /** Called with the code of every reply read, for metrics. */
  onReply?: (code: number) => void;
}

export type SmtpStage = 'connect' | 'banner' | 'ehlo' | 'starttls' | 'mail' | 'rcpt' | 'aborted';
export type SmtpFailureKind = 'refused' | 'timeout' | 'reply' | 'closed' | 'aborted' | 'error';

export interface SmtpFailure {
  /** Where it happened. An abort keeps the stage it interrupted (kind `aborted`). */
  stage: SmtpStage;
  kind: SmtpFailureKind;
  reply?: SmtpReply;
  detail?: string;
}

export interface SmtpCapabilities {
  esmtp: boolean;
  pipelining: boolean;
  /** The session was upgraded to TLS (not merely offered). */
  starttls: boolean;
  smtputf8: boolean;
}

export interface SmtpSessionResult {
  capabilities: SmtpCapabilities;
  banner?: SmtpReply;
  failure?: SmtpFailure;
  mailFromReply?: SmtpReply;
  /** In recipient order, for the recipients the server answered. */
  rcpt: Array<{ address: string; reply: SmtpReply }>;
  /** Not answered (too many recipients, dropped connection, timeout, abort, MAIL refused): worth another session. */
  unanswered: string[];
  /** Non-ASCII addresses not sent because the server lacks SMTPUTF8: another session would not help. */
  skippedNeedsSmtpUtf8: string[];
  /** A 452 4.5.3 (or 452 "too many recipients") stopped the transaction. */
  tooManyRecipients: boolean;
  /** The TLS handshake failed and the session was redone in plaintext on a new connection. */
  tlsFallback: boolean;
  /** TCP connections opened (2 after a TLS fallback). */
  connections: number;
}
