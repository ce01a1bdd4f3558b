/**
 * The guard against a metered answer that was never charged, for every integration test that
 * calls a gateway through `call()` (servers.ts). A 2xx answer of an operation billed per call
 * must carry `X-Service-Free-Remaining`, which only a charge sets (`X-Service-Cost` alone is
 * written on every answer of a metered route, `0` when nothing was charged); the call fails at
 * once otherwise. And when its server closes, the meter itself must hold at least as many calls
 * per key and operation as the 2xx answers seen (GET /v1/usage), so that a charge the headers
 * announce but the meter never recorded fails the test too.
 */
import type { OperationId } from '@svc/contracts';

/** The REST routes of the operations billed per call: any 2xx of theirs is a charged call. */
const PER_CALL_ROUTES: ReadonlyArray<{ method: string; path: string; operation: OperationId }> = [
  { method: 'GET', path: '/v1/qr/qr', operation: 'qr.generate' },
  { method: 'GET', path: '/v1/qr/wifi', operation: 'qr.wifi' },
  { method: 'GET', path: '/v1/email-verify/verify', operation: 'email-verify.single' },
  { method: 'POST', path: '/v1/email-verify/verify/batch', operation: 'email-verify.batch' },
];

const FREE_REMAINING = 'x-service-free-remaining';

/** Per server (its base URL), per key: the 2xx answers seen of each operation. */
const seen = new Map<string, Map<string, Map<OperationId, number>>>();

/** The per-call operation a request is, if it is one. */
export function perCallOperation(method: string, path: string): OperationId | undefined {
  const bare = path.split('?')[0];
  return PER_CALL_ROUTES.find((route) => route.method === method.toUpperCase() && route.path === bare)?.operation;
}

/** Checks one answer: a 2xx of a per-call operation must have been charged; counts it for the meter check. */
export function noteAnswer(baseUrl: string, method: string, path: string, key: string | undefined, status: number, headers: Headers): void {
  const operation = perCallOperation(method, path);
  if (operation === undefined || status < 200 || status > 299) return;
  if (!headers.has(FREE_REMAINING))
    throw new Error(
      `${method} ${path} answered ${status} but was never charged (no X-Service-Free-Remaining): a metered 2xx must be billed`,
    );
  if (key === undefined) return;
  const keys = seen.get(baseUrl) ?? new Map<string, Map<OperationId, number>>();
  seen.set(baseUrl, keys);
  const counts = keys.get(key) ?? new Map<OperationId, number>();
  keys.set(key, counts);
  counts.set(operation, (counts.get(operation) ?? 0) + 1);
}

interface UsageBody {
  operations: Partial<Record<OperationId, { calls: number }>>;
}

/**
 * When a server closes: its meter holds at least the charged calls seen, per key and operation
 * (at least: a test may also call through MCP or with fetch). A key the server no longer answers
 * for (revoked, rotated, or a store cut on purpose) cannot be read and is left out.
 */
export async function expectChargesRecorded(baseUrl: string): Promise<void> {
  const keys = seen.get(baseUrl);
  if (keys === undefined) return;
  for (const [key, counts] of keys) {
    const response = await fetch(`${baseUrl}/v1/usage`, { headers: { authorization: `Bearer ${key}` } }).catch(() => undefined);
    if (response?.status !== 200) continue;
    const usage = (await response.json()) as UsageBody;
    for (const [operation, answered] of counts) {
      const recorded = usage.operations[operation]?.calls ?? 0;
      if (recorded < answered)
        throw new Error(`${answered} answers of ${operation} were 2xx and charged, but the meter recorded ${recorded} calls for their key`);
    }
  }
}

/** Forgets a closed server's answers (its port may serve another server later). */
export function forgetServer(baseUrl: string): void {
  seen.delete(baseUrl);
}
