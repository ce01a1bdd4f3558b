/**
 * The billing rule, written once (docs/api.md, "Operations"; decisions "Operations, prices,
 * limits"): which free allowance a call draws on and how large it is for a key, which operations
 * share it, what a billable call or list unit costs, how many units a list has started and which
 * month a call falls in. Pure functions over the operations table of @svc/contracts; the gateway's
 * charge, the usage route, the list service and the list processor all ask here, and the Redis
 * meter's script is given its pool and allowance from here (it only repeats the arithmetic, in Lua,
 * so that the decision is atomic in Redis).
 */
import { LIST_UNIT_SIZE, OPERATIONS, OPERATION_IDS, type OperationId } from '@svc/contracts/rules';

/** The configured default free allowance of every operation (`FREE_ALLOWANCE_*`). */
export type FreeAllowances = Readonly<Record<OperationId, number>>;
/** A key's own free allowances, where it has any (`keys allowance`): they win over the defaults. */
export type AllowanceOverrides = Readonly<Partial<Record<OperationId, number>>>;
/** Calls per operation in one period, as far as the rule needs them. */
export type CallCounts = Readonly<Partial<Record<OperationId, { readonly calls: number }>>>;

/** The operation whose free allowance `operation` draws on (itself unless it shares another's). */
export const allowanceOwner = (operation: OperationId): OperationId => OPERATIONS[operation].allowanceFrom ?? operation;

// Fixed by the operations table: worked out once at load, not on every metered call.
const POOLS: ReadonlyMap<OperationId, readonly OperationId[]> = new Map(
  OPERATION_IDS.map((operation) => [operation, OPERATION_IDS.filter((other) => allowanceOwner(other) === allowanceOwner(operation))]),
);

/** Every operation drawing on the same free allowance as `operation` (itself included): their calls add up against it. */
export function allowancePool(operation: OperationId): readonly OperationId[] {
  const pool = POOLS.get(operation);
  if (pool === undefined) throw new RangeError(`not an operation: ${String(operation)}`);
  return pool;
}

/**
 * The free allowance a key's calls of `operation` draw on this month: the key's own figure for the
 * pool's owner, else the configured default. List units thus use the key's batch allowance.
 */
export function allowanceFor(operation: OperationId, overrides: AllowanceOverrides, defaults: FreeAllowances): number {
  const owner = allowanceOwner(operation);
  return overrides[owner] ?? defaults[owner];
}

/** Calls made this period against the allowance `operation` draws on (its whole pool's). */
export function poolCalls(operation: OperationId, calls: (member: OperationId) => number): number {
  let used = 0;
  for (const member of allowancePool(operation)) used += calls(member);
  return used;
}

/** `poolCalls` over a usage report. */
export const poolCallsIn = (operation: OperationId, usage: CallCounts): number =>
  poolCalls(operation, (member) => usage[member]?.calls ?? 0);

/** Whether the call that brought its pool to `used` calls is past the allowance (the Lua script repeats this comparison). */
export const isBillable = (allowance: number, used: number): boolean => used > allowance;

/**
 * Whether voiding a free call gives its free place to a call billed for want of it: the pool still
 * made `usedAfterVoid` calls, at least the allowance, so a later call was past it (the Lua script
 * repeats this comparison).
 */
export const voidFreesBilledCall = (allowance: number, usedAfterVoid: number): boolean => usedAfterVoid >= allowance;

/** Calls left in the allowance once its pool made `used` calls. */
export const freeRemaining = (allowance: number, used: number): number => Math.max(0, allowance - used);

/** Price of one billable call (or one list unit) of `operation`, in micro-dollars. */
export const priceOf = (operation: OperationId): number => OPERATIONS[operation].priceMicroUsd;

/** What `billable` calls (or list units) of `operation` cost, in micro-dollars. */
export const costOf = (operation: OperationId, billable: number): number => billable * priceOf(operation);

/** Units a list is billed for once this many of its distinct addresses were processed: one per started hundred. */
export const listUnits = (processedDistinct: number): number => Math.ceil(processedDistinct / LIST_UNIT_SIZE);

/** The current period and the clock readings (epoch ms) within which it holds. */
let current = { period: '', from: 0, until: 0 };

/**
 * The UTC calendar month a call is metered in, as `YYYY-MM`: of `at`, else of now. Now's is kept
 * until the clock leaves its month (either way), instead of a Date and an ISO string per call.
 */
export function billingPeriod(at?: Date): string {
  if (at !== undefined) return at.toISOString().slice(0, 7);
  const now = Date.now();
  if (now < current.from || now >= current.until) {
    const date = new Date(now);
    const [year, month] = [date.getUTCFullYear(), date.getUTCMonth()];
    current = { period: date.toISOString().slice(0, 7), from: Date.UTC(year, month, 1), until: Date.UTC(year, month + 1, 1) };
  }
  return current.period;
}

export interface OperationBill {
  calls: number;
  billableCalls: number;
  /** Left in the allowance the operation draws on (shared with its pool). */
  freeRemaining: number;
  costMicroUsd: number;
  /** Price of one call (of one unit of 100 addresses for a list). */
  priceMicroUsd: number;
  /** The operation whose monthly allowance this one draws on (itself, or the batch's for lists). */
  allowanceFrom: OperationId;
  /** List operations: distinct addresses processed this month (`calls` are the units of 100 they were billed in). */
  addresses?: number;
}

/** One free allowance and the operations that draw on it: shown once (batches and lists share the batch one). */
export interface AllowanceBill {
  operations: OperationId[];
  allowance: number;
  used: number;
  remaining: number;
}

/**
 * What a list of `distinct` addresses will be charged once processed, given `freeRemaining`
 * units left in the allowance it draws on: its units, those past the allowance, their price, and
 * the undiscounted price (every unit billed). The console quotes this before `Verify list`.
 */
export function listCharge(
  distinct: number,
  freeRemainingUnits: number,
): { units: number; billableUnits: number; chargeMicroUsd: number; undiscountedMicroUsd: number } {
  const units = listUnits(distinct);
  const billableUnits = Math.max(0, units - Math.max(0, freeRemainingUnits));
  return {
    units,
    billableUnits,
    chargeMicroUsd: costOf('email-verify.list', billableUnits),
    undiscountedMicroUsd: costOf('email-verify.list', units),
  };
}

/** A key's month, every operation listed (`GET /v1/usage`). */
export function monthlyBill(
  usage: Readonly<
    Partial<Record<OperationId, { readonly calls: number; readonly billableCalls: number; readonly addresses?: number | undefined }>>
  >,
  overrides: AllowanceOverrides,
  defaults: FreeAllowances,
): { operations: Record<OperationId, OperationBill>; allowances: AllowanceBill[]; totalMicroUsd: number } {
  let totalMicroUsd = 0;
  const bill = (operation: OperationId): OperationBill => {
    const { calls, billableCalls, addresses } = usage[operation] ?? { calls: 0, billableCalls: 0 };
    const costMicroUsd = costOf(operation, billableCalls);
    totalMicroUsd += costMicroUsd;
    return {
      calls,
      billableCalls,
      freeRemaining: freeRemaining(allowanceFor(operation, overrides, defaults), poolCallsIn(operation, usage)),
      costMicroUsd,
      priceMicroUsd: priceOf(operation),
      allowanceFrom: allowanceOwner(operation),
      ...(operation === 'email-verify.list' ? { addresses: addresses ?? 0 } : {}),
    };
  };
  const operations = {
    'email-verify.batch': bill('email-verify.batch'),
    'email-verify.single': bill('email-verify.single'),
    'qr.generate': bill('qr.generate'),
    'qr.wifi': bill('qr.wifi'),
    'email-verify.list': bill('email-verify.list'),
  } satisfies Record<OperationId, OperationBill>;
  const allowances = OPERATION_IDS.filter((operation) => allowanceOwner(operation) === operation).map((owner): AllowanceBill => {
    const allowance = allowanceFor(owner, overrides, defaults);
    const used = poolCallsIn(owner, usage);
    return { operations: [...allowancePool(owner)], allowance, used, remaining: freeRemaining(allowance, used) };
  });
  return { operations, allowances, totalMicroUsd };
}
