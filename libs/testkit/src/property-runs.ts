/**
 * How many cases a property test tries: the figure its file gives (sized so that `npm test` stays
 * quick) times PROPERTY_RUNS_SCALE, for a deeper run before a release or after a change to an
 * encoder or a parser (`PROPERTY_RUNS_SCALE=10 npm test -- services/qr-worker`).
 */
export function propertyRuns(runs: number): number {
  const raw = process.env.PROPERTY_RUNS_SCALE;
  const scale = raw === undefined || raw === '' ? 1 : Number(raw);
  if (!Number.isFinite(scale) || scale <= 0) throw new Error(`PROPERTY_RUNS_SCALE must be a positive number, not ${raw}`);
  return Math.max(1, Math.round(runs * scale));
}
