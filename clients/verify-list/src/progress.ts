/**
 * What the progress line says, as pure functions: the rate over the last minute of polls, the
 * time left at that rate, and the line itself (a bar for a terminal, plain text for a log).
 */
import { waitingLines, type WaitingState } from '@svc/contracts/rules';

/** The list's counts, and what the service says waits for a retry, why, and when (see the list object). */
export type ListProgress = WaitingState;

const WINDOW_MS = 60_000;

/**
 * Addresses per second over the last minute: a list's pace changes (domains differ, greylisted
 * addresses wait), so the time left follows the recent rate, not the average since the start.
 */
export class RateMeter {
  private samples: Array<{ at: number; processed: number }> = [];

  add(at: number, processed: number): void {
    this.samples.push({ at, processed });
    // Keep one sample older than the window, so the rate always spans the whole minute.
    while (this.samples.length > 2 && this.samples[1]!.at <= at - WINDOW_MS) this.samples.shift();
  }

  /** Addresses per second, or undefined before two samples a moment apart. */
  rate(): number | undefined {
    const first = this.samples[0];
    const last = this.samples.at(-1);
    if (first === undefined || last === undefined || last.at - first.at < 500) return undefined;
    return ((last.processed - first.processed) * 1000) / (last.at - first.at);
  }
}

/** `45s`, `3m 05s`, `1h 02m`. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

const number = (n: number): string => n.toLocaleString('en-US');

/** The part after the counts: what the wait depends on. */
function outlook(progress: ListProgress, rate: number | undefined, now: number): string {
  const left = progress.count - progress.processed;
  if (progress.status === 'queued') return 'waiting for a worker';
  // The console's waiting panel says the same (one formatter), without the time of day: a line must stay short.
  if (progress.status === 'retrying') return waitingLines(progress, new Date(now), { clock: false }).join(' ');
  if (left === 0) return 'done';
  if (rate === undefined) return 'measuring the rate';
  if (rate <= 0) return '0 addresses/s';
  return `${rate < 10 ? rate.toFixed(1) : number(Math.round(rate))} addresses/s, ${formatDuration(left / rate)} left`;
}

const BAR_WIDTH = 24;

/** One line: `[████████░░░░] 4,300/12,000 35%, 85 addresses/s, 1m 31s left (running)` (`bar: false` for logs). */
export function progressLine(progress: ListProgress, rate: number | undefined, options: { bar: boolean; now?: number }): string {
  const fraction = progress.count === 0 ? 1 : Math.min(1, progress.processed / progress.count);
  const percent = `${Math.floor(fraction * 100)}%`;
  const counts = `${number(progress.processed)}/${number(progress.count)}`;
  const text = `${counts} ${percent}, ${outlook(progress, rate, options.now ?? Date.now())} (${progress.status})`;
  if (!options.bar) return text;
  const filled = Math.round(fraction * BAR_WIDTH);
  return `[${'█'.repeat(filled)}${'░'.repeat(BAR_WIDTH - filled)}] ${text}`;
}
