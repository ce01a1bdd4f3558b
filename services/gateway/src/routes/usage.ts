import { OPERATIONS, OPERATION_IDS, billingPeriod, formatUsd, type OperationId } from '@svc/contracts';
import { unavailableError } from '@svc/jobs';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { errorResponses } from '../openapi-schemas.ts';
import type { Meter } from '../stores/meter.ts';
import { BEARER_SECURITY } from './guards.ts';

const money = z.string().describe('US dollars as a plain decimal, like X-Service-Cost');
const operationUsageSchema = z.object({
  calls: z.number().int(),
  billableCalls: z.number().int(),
  freeRemaining: z.number().int(),
  costUsd: money,
});
export const usageResponseSchema = z.object({
  period: z.string().describe('UTC calendar month, YYYY-MM'),
  operations: z.record(z.enum(OPERATION_IDS), operationUsageSchema),
  totalCostUsd: money,
});

export function usageRoutes(
  app: FastifyInstance,
  options: { meter: Meter; freeAllowances: Record<OperationId, number> },
  done: (error?: Error) => void,
): void {
  app.get(
    '/v1/usage',
    {
      config: { auth: 'key' },
      schema: {
        tags: ['account'],
        summary: "The caller's usage this month (not metered)",
        security: BEARER_SECURITY,
        response: { 200: usageResponseSchema, ...errorResponses },
      },
    },
    async (request) => {
      const key = request.identity.key!;
      const period = billingPeriod();
      let usage;
      try {
        usage = await options.meter.usage(key.id, period);
      } catch (error) {
        throw unavailableError(error);
      }
      let totalMicroUsd = 0;
      const operations = Object.fromEntries(
        OPERATION_IDS.map((operation) => {
          const { calls, billableCalls } = usage[operation] ?? { calls: 0, billableCalls: 0 };
          const allowance = key.freeAllowance[operation] ?? options.freeAllowances[operation];
          const cost = billableCalls * OPERATIONS[operation].priceMicroUsd;
          totalMicroUsd += cost;
          return [operation, { calls, billableCalls, freeRemaining: Math.max(0, allowance - calls), costUsd: formatUsd(cost) }];
        }),
      );
      return { period, operations, totalCostUsd: formatUsd(totalMicroUsd) };
    },
  );
  done();
}
