/**
 * Probes one mail-server group (domains that share an MX set): sessions carrying many RCPTs,
 * failover to the next address and MX host by preference when a host refuses, times out or turns
 * the prober away before any RCPT, and a new session for what a `452 4.5.3` or a dropped
 * connection left unanswered. Never connects to a non-public address unless allowed.
 */
import { runSmtpSession, type SmtpReply, type SmtpSessionResult, type SmtpStage } from '../smtp/session.ts';
import type { SessionLimiter } from './host-limiter.ts';

/** RFC 5321 §4.5.3.1.8: a server must accept at least 100 recipients per transaction. */
export const MAX_RCPT_PER_SESSION = 100;

export type ProbeOutcome =
  | { kind: 'rcpt'; reply: SmtpReply }
  /** The server turned the session away before this RCPT (554 banner, 5.7.1 at MAIL FROM, ...). */
  | { kind: 'session'; stage: SmtpStage; reply: SmtpReply }
  | { kind: 'no_connect' }
  | { kind: 'timeout' }
  | { kind: 'needs_smtputf8' };

export interface MailServerProbeDeps {
  lookupAddresses: (host: string, signal: AbortSignal) => Promise<string[]>;
  filterTargets: (addresses: string[]) => string[];
  limiter: SessionLimiter;
  session: {
    port: number;
    heloName: string;
    mailFrom: string;
    connectTimeoutMs: number;
    commandTimeoutMs: number;
    socksProxy?: string;
  };
  observeSession?: (result: SmtpSessionResult | undefined) => void;
  /** +1 when a session opens, -1 when it ends (the open-sessions gauge). */
  trackOpen?: (delta: 1 | -1) => void;
  onReply?: (code: number) => void;
}

function failureOutcome(result: SmtpSessionResult): ProbeOutcome {
  const failure = result.failure;
  if (failure?.reply !== undefined) return { kind: 'session', stage: failure.stage, reply: failure.reply };
  if (failure?.kind === 'timeout' || failure?.kind === 'aborted') return { kind: 'timeout' };
  return { kind: 'no_connect' };
}

export async function probeMailServers(
  hosts: string[],
  recipients: string[],
  deps: MailServerProbeDeps,
  signal: AbortSignal,
): Promise<Map<string, ProbeOutcome>> {
  const outcomes = new Map<string, ProbeOutcome>();
  let pending = [...recipients];
  let lastFailure: ProbeOutcome = { kind: 'no_connect' };

  hosts: for (const host of hosts) {
    if (signal.aborted) break;
    const addresses = deps.filterTargets(await deps.lookupAddresses(host, signal).catch(() => []));
    for (const address of addresses) {
      // Sessions on this address while each makes progress: a 452 or a drop leaves a remainder.
      while (pending.length > 0 && !signal.aborted) {
        const chunk = pending.slice(0, MAX_RCPT_PER_SESSION);
        let result: SmtpSessionResult | undefined;
        try {
          result = await deps.limiter.run(address, signal, async () => {
            deps.trackOpen?.(1);
            try {
              return await runSmtpSession({
                ...deps.session,
                host: address,
                servername: host,
                recipients: chunk,
                signal,
                onReply: deps.onReply,
              });
            } finally {
              deps.trackOpen?.(-1);
            }
          });
        } catch (error) {
          if (signal.aborted) break hosts; // waited for a slot until the deadline
          throw error;
        } finally {
          deps.observeSession?.(result);
        }
        for (const { address: recipient, reply } of result.rcpt) outcomes.set(recipient, { kind: 'rcpt', reply });
        for (const recipient of result.skippedNeedsSmtpUtf8) outcomes.set(recipient, { kind: 'needs_smtputf8' });
        const progressed = result.rcpt.length > 0 || result.skippedNeedsSmtpUtf8.length > 0;
        pending = pending.filter((recipient) => !outcomes.has(recipient));
        if (!progressed) {
          lastFailure = failureOutcome(result);
          break; // next address, then next MX host
        }
      }
      if (pending.length === 0) break hosts;
    }
  }
  const rest: ProbeOutcome = signal.aborted ? { kind: 'timeout' } : lastFailure;
  for (const recipient of pending) outcomes.set(recipient, rest);
  return outcomes;
}
