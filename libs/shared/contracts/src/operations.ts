/**
 * The billable operations and their prices, limits and allowances (docs/api.md, "Operations"):
 * the table only; the rule that reads it (who draws on which allowance, costs, periods) is
 * @svc/metering's billing.ts.
 * Money is held in micro-dollars (integers) so that sums never drift; it is formatted as a plain
 * decimal only at the edge.
 */
export const OPERATION_IDS = ['email-verify.batch', 'email-verify.single', 'qr.generate', 'qr.wifi', 'email-verify.list'] as const;
export type OperationId = (typeof OPERATION_IDS)[number];

/** Environment names of the rate limits and free allowances: config.ts reads them by these types, so a misspelt name does not compile. */
export type RateLimitEnv =
  | 'RATE_LIMIT_EMAIL_VERIFY_BATCH'
  | 'RATE_LIMIT_EMAIL_VERIFY_SINGLE'
  | 'RATE_LIMIT_QR_GENERATE'
  | 'RATE_LIMIT_QR_WIFI'
  | 'RATE_LIMIT_EMAIL_VERIFY_LIST';
export type FreeAllowanceEnv =
  'FREE_ALLOWANCE_EMAIL_VERIFY_BATCH' | 'FREE_ALLOWANCE_EMAIL_VERIFY_SINGLE' | 'FREE_ALLOWANCE_QR_GENERATE' | 'FREE_ALLOWANCE_QR_WIFI';

export interface OperationDef {
  id: OperationId;
  priceMicroUsd: number;
  /** Environment names of its rate limit and free allowance (config.ts reads them). */
  rateLimitEnv: RateLimitEnv;
  freeAllowanceEnv: FreeAllowanceEnv;
  defaultRateLimitPerMinute: number;
  defaultFreeAllowance: number;
  /** Tool name and the MCP server path it is served on. */
  tool: string;
  toolServer: 'email-verify' | 'qr';
  /** Draws on another operation's free allowance instead of one of its own (list units use the batch allowance). */
  allowanceFrom?: OperationId;
}

export const OPERATIONS: Record<OperationId, OperationDef> = {
  'email-verify.batch': {
    id: 'email-verify.batch',
    priceMicroUsd: 150_000,
    rateLimitEnv: 'RATE_LIMIT_EMAIL_VERIFY_BATCH',
    freeAllowanceEnv: 'FREE_ALLOWANCE_EMAIL_VERIFY_BATCH',
    defaultRateLimitPerMinute: 120,
    defaultFreeAllowance: 10,
    tool: 'email-verify_verify-batch',
    toolServer: 'email-verify',
  },
  'email-verify.single': {
    id: 'email-verify.single',
    priceMicroUsd: 3_000,
    rateLimitEnv: 'RATE_LIMIT_EMAIL_VERIFY_SINGLE',
    freeAllowanceEnv: 'FREE_ALLOWANCE_EMAIL_VERIFY_SINGLE',
    defaultRateLimitPerMinute: 300,
    defaultFreeAllowance: 100,
    tool: 'email-verify_verify',
    toolServer: 'email-verify',
  },
  'qr.generate': {
    id: 'qr.generate',
    priceMicroUsd: 500,
    rateLimitEnv: 'RATE_LIMIT_QR_GENERATE',
    freeAllowanceEnv: 'FREE_ALLOWANCE_QR_GENERATE',
    defaultRateLimitPerMinute: 300,
    defaultFreeAllowance: 1000,
    tool: 'qr_generate',
    toolServer: 'qr',
  },
  'qr.wifi': {
    id: 'qr.wifi',
    priceMicroUsd: 500,
    rateLimitEnv: 'RATE_LIMIT_QR_WIFI',
    freeAllowanceEnv: 'FREE_ALLOWANCE_QR_WIFI',
    defaultRateLimitPerMinute: 300,
    defaultFreeAllowance: 1000,
    tool: 'qr_wifi',
    toolServer: 'qr',
  },
  // Billed per started 100 processed distinct addresses (a "unit"), each unit priced as a batch
  // and drawing on the batch free allowance; creating a list costs nothing.
  'email-verify.list': {
    id: 'email-verify.list',
    priceMicroUsd: 150_000,
    rateLimitEnv: 'RATE_LIMIT_EMAIL_VERIFY_LIST',
    freeAllowanceEnv: 'FREE_ALLOWANCE_EMAIL_VERIFY_BATCH',
    defaultRateLimitPerMinute: 10,
    defaultFreeAllowance: 10,
    tool: 'email-verify_list-create',
    toolServer: 'email-verify',
    allowanceFrom: 'email-verify.batch',
  },
};

/** `150000` → `"0.15"`, `500` → `"0.0005"`, `0` → `"0"`: no unit, no exponent, no trailing zeros. */
export function formatUsd(microUsd: number): string {
  // Every call answered writes one of a few amounts (a price or 0) in X-Service-Cost.
  if (microUsd === 0) return '0';
  if (!Number.isSafeInteger(microUsd) || microUsd < 0) throw new RangeError(`not a money amount: ${microUsd}`);
  const whole = Math.floor(microUsd / 1_000_000);
  const fraction = String(microUsd % 1_000_000)
    .padStart(6, '0')
    .replace(/0+$/, '');
  return fraction === '' ? String(whole) : `${whole}.${fraction}`;
}
