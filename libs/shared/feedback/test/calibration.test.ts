/**
 * The probability on a simulated send history: several catch-all domains, each with a true share
 * of addresses that receive mail. Part of each domain's addresses is sent to and reported (the
 * key's history); the rest are verified later and forecast. A domain where most sends delivered
 * must get high probabilities, one where most bounced low, and the forecasts must beat the best
 * constant (the key's overall share) on the Brier score. The table is printed for the notes.
 */
import { describe, expect, it } from 'vitest';
import { Feedback } from '../src/feedback.ts';
import { MemoryFeedbackStore } from '../src/memory-store.ts';
import { DEFAULT_SETTINGS } from '../src/effects.ts';
import { brier } from '../src/probability.ts';

/** A small deterministic generator (mulberry32), so the table is the same on every run. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const DOMAINS = [
  { domain: 'mostly-real.example', share: 0.95, reported: 40 },
  { domain: 'good.example', share: 0.8, reported: 25 },
  { domain: 'mixed.example', share: 0.5, reported: 30 },
  { domain: 'poor.example', share: 0.2, reported: 25 },
  { domain: 'trap.example', share: 0.05, reported: 40 },
  { domain: 'few-reports.example', share: 0.1, reported: 3 },
];
const FORECAST_PER_DOMAIN = 200;

describe('calibration on a simulated history', () => {
  it('gives high probabilities where sends delivered, low where they bounced, and beats a constant', async () => {
    const next = random(31);
    const feedback = new Feedback({
      store: new MemoryFeedbackStore(DEFAULT_SETTINGS.retentionMs),
      secret: () => Promise.resolve('calibration-secret-0123456789'),
      settings: DEFAULT_SETTINGS,
      scope: 'key',
    });
    const now = Date.now();
    let reportedDelivered = 0;
    let reportedTotal = 0;
    for (const { domain, share, reported } of DOMAINS) {
      const events = Array.from({ length: reported }, (_, i) => {
        const delivered = next() < share;
        reportedDelivered += delivered ? 1 : 0;
        reportedTotal += 1;
        return {
          email: `sent${i}@${domain}`,
          outcome: delivered ? ('delivered' as const) : ('hard_bounce' as const),
          at: now - 86_400_000,
          source: 'api' as const,
        };
      });
      await feedback.report('key1', events);
      // The verifier found each domain catch-all: its tally joins the key's rate.
      await feedback.remember('key1', [{ address: `sent0@${domain}`, verdict: 'risky', reason: 'accept_all', score: 60, catchAll: true }]);
    }
    const constant = reportedDelivered / reportedTotal;
    const rows: Array<Record<string, string | number>> = [];
    const all: Array<{ p: number; delivered: boolean }> = [];
    const allConstant: Array<{ p: number; delivered: boolean }> = [];
    for (const { domain, share, reported } of DOMAINS) {
      const addresses = Array.from({ length: FORECAST_PER_DOMAIN }, (_, i) => `later${i}@${domain}`);
      const known = await feedback.recall('key1', addresses);
      const forecasts = addresses.map((address) => ({ p: known.get(address)!.probability, delivered: next() < share }));
      const constants = forecasts.map(({ delivered }) => ({ p: constant, delivered }));
      all.push(...forecasts);
      allConstant.push(...constants);
      const meanP = forecasts.reduce((sum, f) => sum + f.p, 0) / forecasts.length;
      const observed = forecasts.filter((f) => f.delivered).length / forecasts.length;
      rows.push({
        domain,
        reported,
        'true share': share,
        'observed share': Number(observed.toFixed(3)),
        'mean probability': Number(meanP.toFixed(3)),
        'Brier (probability)': Number(brier(forecasts).toFixed(4)),
        'Brier (constant)': Number(brier(constants).toFixed(4)),
      });
      // Away from the key's share, on the side of the truth.
      if (share >= 0.8) expect(meanP).toBeGreaterThan(constant + 0.1);
      if (share <= 0.2 && reported >= 20) expect(meanP).toBeLessThan(constant - 0.15);
    }
    const overall = { probability: brier(all), constant: brier(allConstant) };
    console.log(`\ncatch-all probability calibration (constant = key's reported share ${constant.toFixed(3)})`);
    console.table(rows);
    console.log(`overall Brier: probability ${overall.probability.toFixed(4)}, constant ${overall.constant.toFixed(4)}`);
    expect(overall.probability).toBeLessThan(overall.constant);
    // Ordered as the truth is: the better the domain, the higher its mean probability.
    const means = rows.filter((row) => Number(row['reported']) >= 20).map((row) => Number(row['mean probability']));
    expect([...means].sort((a, b) => b - a)).toEqual(means);
  });
});
