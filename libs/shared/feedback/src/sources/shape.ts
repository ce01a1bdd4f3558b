/** A body that is not the shape its source documents: the door answers 400 with this message. */
export class SourceShapeError extends Error {}

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export const stringField = (record: Record<string, unknown>, name: string): string | undefined => {
  const value = record[name];
  return typeof value === 'string' ? value : undefined;
};

/** Unix seconds (SendGrid, Mailgun: with a fraction) as epoch ms. */
export const unixSeconds = (value: unknown, fallback: number): number =>
  typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.round(value * 1_000) : fallback;
