/**
 * Egress health: can this worker reach mail servers' SMTP port at all? A TCP connection to the
 * SMTP canaries (VERIFY_SMTP_CANARIES, else the DNS canaries' MX hosts), through each egress
 * (direct, or each VERIFY_SOCKS_PROXY entry). A few canaries are tried at once, all the others
 * only when none of those accepts, so a healthy check costs a few connections per egress and a
 * blocked port at most two connect timeouts.
 */
import { egressOpen } from './canary-rule.ts';

export interface EgressTarget {
  host: string;
  port: number;
}

export interface EgressReport {
  /** Egress labels (`direct` or the proxy's host:port) that reached a canary, and those that did not. */
  open: string[];
  closed: string[];
  /** Canaries there were to try (`host:port`); none when none is known (the DNS canaries did not resolve). */
  targets: string[];
}

export const NO_EGRESS_REPORT: EgressReport = { open: [], closed: [], targets: [] };

/** Canaries tried at once. */
const AT_ONCE = 3;

export interface EgressCheckDeps<E> {
  targets: () => Promise<EgressTarget[]>;
  egresses: readonly E[];
  label: (egress: E) => string;
  /** Whether a TCP connection to the target through the egress was accepted (closed at once). */
  connect: (target: EgressTarget, egress: E) => Promise<boolean>;
}

export function egressCheck<E>(deps: EgressCheckDeps<E>): () => Promise<{ healthy: boolean; detail: EgressReport }> {
  return async () => {
    const targets = await deps.targets();
    const report: EgressReport = { open: [], closed: [], targets: targets.map((target) => `${target.host}:${target.port}`) };
    await Promise.all(
      deps.egresses.map(async (egress) => {
        // The first few, then all the others at once: a blocked port costs two connect timeouts, not one per few canaries.
        const rounds = [targets.slice(0, AT_ONCE), targets.slice(AT_ONCE)].filter((round) => round.length > 0);
        let reached = false;
        for (const round of rounds) {
          if (reached) break;
          reached = (await Promise.all(round.map((target) => deps.connect(target, egress)))).some(Boolean);
        }
        (reached || targets.length === 0 ? report.open : report.closed).push(deps.label(egress));
      }),
    );
    return { healthy: egressOpen(report.open.length, targets.length === 0 ? 0 : deps.egresses.length), detail: report };
  };
}

/** The one log line of a closed egress, naming the remedy. */
export function closedMessage(report: EgressReport): string {
  const tried = report.targets.join(', ');
  return (
    `SMTP egress closed: no canary mail server (${tried}) accepts a TCP connection through ${report.closed.join(', ')}. ` +
    'Outbound port 25 is most likely blocked (the default of most clouds); addresses SMTP would decide are risky/smtp_unavailable and not cached. ' +
    'Remedy: ask the provider to open outbound port 25, or set VERIFY_SOCKS_PROXY=socks5://host:port (a comma-separated list is an egress pool) ' +
    'to a proxy whose port 25 is open; if the canaries are wrong for this network, set VERIFY_SMTP_CANARIES.'
  );
}
