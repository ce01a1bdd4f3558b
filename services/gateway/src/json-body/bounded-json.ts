/**
 * The one JSON body parser of every route (REST, lists, tool servers): the text's shape is
 * measured first (shape-scan.ts) and a hostile one refused before JSON.parse builds anything;
 * then fastify's own parser (prototype poisoning refused) builds the rest. The bounds are the
 * contract's: nesting deeper than 8 levels is refused, and no array or text holds more values
 * than a list of 100,000 addresses needs.
 */
import { ApiError, MAX_LIST_ADDRESSES } from '@svc/contracts';
import { tooManyAddresses } from '@svc/lists/service';
import type { FastifyInstance } from 'fastify';
import { scanJsonShape, type ShapeLimits, type ShapeProblem } from './shape-scan.ts';

export const JSON_LIMITS: ShapeLimits = {
  maxDepth: 8,
  maxArrayItems: MAX_LIST_ADDRESSES,
  // Every address and a key per address would still fit: well above any honest body.
  maxValues: 2 * MAX_LIST_ADDRESSES + 1_000,
};

/** The refusal of a body whose shape passed a bound. */
export function shapeError(problem: ShapeProblem): ApiError {
  if (problem.kind === 'depth')
    return new ApiError('invalid_request', `The JSON body is nested deeper than ${JSON_LIMITS.maxDepth} levels; no request takes that.`);
  // A list of more than 100,000 addresses says so in the list's terms; a bomb of other values does not.
  if (problem.kind === 'array' && problem.key === 'emails' && problem.strings) return tooManyAddresses();
  return new ApiError('invalid_request', 'The JSON body holds more values than any request takes.');
}

/** JSON.parse within the same bounds, for a route that reads its JSON text itself (feedback webhooks keep it for signatures). */
export function parseBoundedJson(text: string): unknown {
  const problem = scanJsonShape(text, JSON_LIMITS);
  if (problem !== undefined) throw shapeError(problem);
  return JSON.parse(text);
}

/** Replaces fastify's JSON parser (on the root instance: every route inherits it). */
export function useBoundedJsonParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    const problem = scanJsonShape(text, JSON_LIMITS);
    if (problem !== undefined) {
      done(shapeError(problem), undefined);
      return;
    }
    void parse(request, text, done);
  });
}
