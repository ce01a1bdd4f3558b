/**
 * The egress pool: the ways out to port 25 (direct, or each VERIFY_SOCKS_PROXY entry). Sessions
 * are spread over the egresses round robin; one that a mail server refused by name (a blocklist,
 * the client's address) is set aside for that server's provider, or its host when no provider
 * is known, for 30 minutes, and others carry that provider's sessions meanwhile. With one egress
 * nothing is ever set aside: there is nowhere else to go.
 */

export interface Egress {
  /** `direct`, or the proxy's `host:port` (never its credentials): the metrics' label. */
  label: string;
  /** The proxy URL; undefined for a direct connection. */
  proxy?: string;
}

export const SET_ASIDE_MS = 30 * 60_000;

export interface EgressPoolOptions {
  setAsideMs?: number;
  now?: () => number;
  /** Whether the egress reached a canary mail server at the last check (egress health); unknown counts as open. */
  isOpen?: (egress: Egress) => boolean;
}

export function egressesOf(proxies: readonly string[] | undefined): Egress[] {
  if (proxies === undefined || proxies.length === 0) return [{ label: 'direct' }];
  return proxies.map((proxy) => ({ label: proxyLabel(proxy), proxy }));
}

function proxyLabel(proxy: string): string {
  try {
    const url = new URL(proxy);
    return `${url.hostname}:${url.port || '1080'}`;
  } catch {
    return 'proxy';
  }
}

export class EgressPool {
  readonly egresses: Egress[];
  private next = 0;
  /** `label \u0000 key` → when the egress may serve that key again. */
  private readonly asideUntil = new Map<string, number>();
  private readonly now: () => number;

  constructor(
    proxies: readonly string[] | undefined,
    private readonly options: EgressPoolOptions = {},
  ) {
    this.egresses = egressesOf(proxies);
    this.now = options.now ?? Date.now;
  }

  /**
   * The egress for the next session to `key` (a provider or a host): round robin over those
   * neither set aside for it nor closed; when every one is, the one free again soonest (a
   * session that is refused again says so, which is the truth).
   */
  pick(key: string): Egress {
    const count = this.egresses.length;
    const usable = this.egresses.filter((egress) => !this.isAside(egress, key));
    const open = usable.filter((egress) => this.options.isOpen?.(egress) ?? true);
    const candidates = open.length > 0 ? open : usable;
    if (candidates.length === 0) return this.soonestBack(key);
    const start = this.next++ % count;
    for (let i = 0; i < count; i++) {
      const egress = this.egresses[(start + i) % count];
      if (egress !== undefined && candidates.includes(egress)) return egress;
    }
    return candidates[0] ?? this.soonestBack(key);
  }

  /** Sets the egress aside for `key`; false when there is no other egress to take over (one egress: nothing changes). */
  setAside(egress: Egress, key: string): boolean {
    if (this.egresses.length < 2) return false;
    this.asideUntil.set(`${egress.label}\u0000${key}`, this.now() + (this.options.setAsideMs ?? SET_ASIDE_MS));
    return true;
  }

  /** Whether another egress than `egress` could serve `key` now. */
  hasAlternative(egress: Egress, key: string): boolean {
    return this.egresses.some((other) => other !== egress && !this.isAside(other, key));
  }

  /** How many keys each egress is set aside for now (the `set aside` gauge). */
  setAsideCounts(): Map<string, number> {
    const counts = new Map(this.egresses.map((egress) => [egress.label, 0]));
    const now = this.now();
    for (const [entry, until] of this.asideUntil) {
      if (until <= now) {
        this.asideUntil.delete(entry);
        continue;
      }
      const label = entry.slice(0, entry.indexOf('\u0000'));
      counts.set(label, (counts.get(label) ?? 0) + 1);
    }
    return counts;
  }

  private isAside(egress: Egress, key: string): boolean {
    const until = this.asideUntil.get(`${egress.label}\u0000${key}`);
    return until !== undefined && until > this.now();
  }

  private soonestBack(key: string): Egress {
    const back = (egress: Egress) => this.asideUntil.get(`${egress.label}\u0000${key}`) ?? 0;
    return [...this.egresses].sort((a, b) => back(a) - back(b))[0] ?? { label: 'direct' };
  }
}
