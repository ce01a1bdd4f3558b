/**
 * `@svc/contracts/rules`: the part of the contracts with no schema (the error model, the
 * operations table and prices, the list rules), importable without zod. The web console bundles
 * the service's rules from here; the pure rule modules of other packages (the billing rule, the
 * address column) import from here so that the console can bundle them too.
 */
export * from './errors.ts';
export * from './operations.ts';
export * from './list-rules.ts';
export * from './results-file.ts';
export * from './list-waiting.ts';
