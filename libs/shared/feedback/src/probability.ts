/**
 * The chance that an address at a catch-all domain receives mail, from what the key saw when it
 * sent there: a Beta-binomial estimate in two levels (empirical Bayes).
 *
 * - The key's catch-all rate m: deliveries D and hard bounces B of distinct addresses at every
 *   catch-all domain the key reported on, under a Beta(α0, β0) prior:
 *   m = (α0 + D) / (α0 + β0 + D + B). The prior, Beta(3, 1) (mean 0.75, worth 4 addresses), is
 *   what the trade reports for catch-all addresses in general: most receive mail, and the
 *   commercial services' lowest class still delivers 60 % of the time.
 * - A domain's rate θ ~ Beta(k·m, k·(1 − m)) around it, k = 10 (a domain's own history
 *   outweighs the key's once it holds more than ten addresses). With d deliveries and b hard
 *   bounces at the domain, the posterior mean is p = (k·m + d) / (k + d + b).
 *
 * p is what `probability` answers (two decimals); with no data at all it is the prior's mean.
 */
import type { Tally } from './state.ts';

export const PRIOR = { alpha: 3, beta: 1 } as const;
/** Pseudo-addresses of the key's rate that a domain's estimate starts from. */
export const DOMAIN_CONCENTRATION = 10;

export const priorMean = (): number => PRIOR.alpha / (PRIOR.alpha + PRIOR.beta);

/** The key's catch-all rate m. */
export function scopeRate(overall: Tally): number {
  return (PRIOR.alpha + overall.delivered) / (PRIOR.alpha + PRIOR.beta + overall.delivered + overall.bounced);
}

/** p for a domain, unrounded. */
export function catchAllProbability(domain: Tally, overall: Tally): number {
  const m = scopeRate(overall);
  return (DOMAIN_CONCENTRATION * m + domain.delivered) / (DOMAIN_CONCENTRATION + domain.delivered + domain.bounced);
}

export const roundProbability = (p: number): number => Math.round(p * 100) / 100;

/**
 * The score of an `accept_all` result moved by its probability, inside the risky band (20..79):
 * 40 points per unit of probability away from the prior's mean, so a result with no data keeps
 * the score it had (60) and one at p = 1 reaches 70, at p = 0 30.
 */
export const PROBABILITY_POINTS = 40;
export function scoreWithProbability(score: number, p: number): number {
  return Math.min(79, Math.max(20, Math.round(score + PROBABILITY_POINTS * (p - priorMean()))));
}

/** Brier score: mean squared difference of the forecasts from what happened (1 delivered, 0 not). */
export function brier(forecasts: ReadonlyArray<{ p: number; delivered: boolean }>): number {
  if (forecasts.length === 0) return 0;
  return forecasts.reduce((sum, { p, delivered }) => sum + (p - (delivered ? 1 : 0)) ** 2, 0) / forecasts.length;
}
