/**
 * The verify engine's call as another package makes it in the verify-worker's process: the list
 * processor (`@svc/lists`) calls the engine (`services/verify-worker`), and neither imports the
 * other, so what passes between them is named here.
 */
import type { VerifyResult } from './verify.ts';

/** One address's result, and what a later retry needs to know. */
export interface VerifyOutcome {
  result: VerifyResult;
  /** The outcome came from a temporary condition (a 4xx reply, a timeout, a failed connection or DNS lookup) and may change on a later try. */
  temporary: boolean;
  /** The delay, in seconds, that the reply deciding this outcome asked for before a retry, when its text states one. */
  retryAfterSeconds?: number;
  /**
   * No mail server was asked about this address: the call's deadline came while its session
   * waited for a slot (other work held the server's connections). A timeout as an answer; for a
   * caller with time (a list), a try that did not happen rather than a temporary answer.
   */
  unasked?: true;
}

/**
 * Asked once a session slot for a mail server is granted, before the session opens: a rejection
 * opens no session (the slot is given back). The caller aborts its call's signal too if it wants
 * the rest of the call to stop.
 */
export type BeforeSession = () => Promise<void>;

export interface VerifyOptions {
  /** When the answer is due: what is unfinished then is a timeout. */
  deadlineAt: number;
  signal: AbortSignal;
  beforeSession?: BeforeSession;
  /** Called as distinct addresses settle: how many of how many (a tool call's progress notifications). */
  onSettled?: (settled: number, total: number) => void;
  /** The key the verification is made for: its reported sends decide known bounces, probabilities, history. */
  keyId?: string;
  /**
   * Each session on a connection of its own, none taken from the parked ones: a list's retry of a
   * temporary answer (decisions: "retried later on a fresh connection"; a greylisting server may
   * judge the connection, not only the sender and recipient).
   */
  freshConnection?: boolean;
}
