/** A JSON object (not null). Apart from api.ts so that the readers of answers (models.ts) load without the DOM, in unit tests too. */
export const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;
