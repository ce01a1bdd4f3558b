/**
 * A periodic health check whose latest verdict can be read now, awaited until the first check
 * is in, or asked fresh ("a check begun after this moment"), with concurrent askers sharing one
 * check. The resolver and the egress monitors are both this, with their own check.
 */
import { HEALTHY_CHECK_INTERVAL_MS, UNHEALTHY_CHECK_INTERVAL_MS } from './canary-rule.ts';

export interface HealthVerdict<D> {
  healthy: boolean;
  detail: D;
  /** When the check that gave this verdict began (ms since epoch). */
  startedAt: number;
}

export interface MonitorOptions<D> {
  check: () => Promise<{ healthy: boolean; detail: D }>;
  /** The detail of a check that failed outright (it threw): unhealthy. */
  failedDetail: D;
  /** Every verdict; `changed` when it differs from the one before (the first verdict counts as a change only when unhealthy). */
  onVerdict?: (verdict: HealthVerdict<D>, changed: boolean) => void;
  healthyIntervalMs?: number;
  unhealthyIntervalMs?: number;
  now?: () => number;
}

export class HealthMonitor<D> {
  private latest: HealthVerdict<D> | undefined;
  private running: { startedAt: number; done: Promise<HealthVerdict<D>> } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly now: () => number;

  constructor(private readonly options: MonitorOptions<D>) {
    this.now = options.now ?? Date.now;
  }

  /** The first check now, then one at each interval (timers that never hold the process open). */
  start(): void {
    this.stopped = false;
    void this.runCheck();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** The latest verdict; undefined before the first check is in. */
  get current(): HealthVerdict<D> | undefined {
    return this.latest;
  }

  /** The latest verdict, waiting for the first check if none is in yet. */
  async verdict(): Promise<HealthVerdict<D>> {
    return this.latest ?? this.running?.done ?? this.runCheck();
  }

  /** A verdict from a check begun at or after `since`: the running one when it qualifies, else a new one. */
  async fresh(since: number): Promise<HealthVerdict<D>> {
    if (this.running !== undefined && this.running.startedAt >= since) return this.running.done;
    if (this.latest !== undefined && this.latest.startedAt >= since) return this.latest;
    return this.runCheck();
  }

  private runCheck(): Promise<HealthVerdict<D>> {
    if (this.running !== undefined && this.running.startedAt >= this.now()) return this.running.done;
    const startedAt = this.now();
    const done = this.options
      .check()
      .catch(() => ({ healthy: false, detail: this.options.failedDetail }))
      .then(({ healthy, detail }) => {
        const verdict: HealthVerdict<D> = { healthy, detail, startedAt };
        // A slower check begun earlier never overwrites a later one's verdict.
        if (this.latest === undefined || this.latest.startedAt <= startedAt) {
          const changed = this.latest === undefined ? !healthy : this.latest.healthy !== healthy;
          this.latest = verdict;
          this.options.onVerdict?.(verdict, changed);
          this.schedule(healthy);
        }
        return verdict;
      })
      .finally(() => {
        if (this.running?.done === done) this.running = undefined;
      });
    this.running = { startedAt, done };
    return done;
  }

  private schedule(healthy: boolean): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    const interval = healthy
      ? (this.options.healthyIntervalMs ?? HEALTHY_CHECK_INTERVAL_MS)
      : (this.options.unhealthyIntervalMs ?? UNHEALTHY_CHECK_INTERVAL_MS);
    this.timer = setTimeout(() => void this.runCheck(), interval);
    this.timer.unref();
  }
}
