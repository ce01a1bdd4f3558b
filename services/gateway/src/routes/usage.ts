import { OPERATIONS, OPERATION_IDS, allowanceOwner, allowancePool, billingPeriod, formatUsd, type OperationId } from '@svc/contracts';
import { storeUnavailableError } from '@svc/jobs';
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { USAGE_EXAMPLE } from '../openapi-examples.ts';
import { accountResponses, json, usageResponseSchema } from '../openapi-schemas.ts';
import type { Meter } from '../stores/meter.ts';
import { BEARER_SECURITY, callerKey } from './guards.ts';

export const usageRoutes: FastifyPluginCallbackZod<{ meter: Meter; freeAllowances: Record<OperationId, number> }> = (
  app,
  options,
  done,
) => {
  app.get(
    '/v1/usage',
    {
      config: { auth: 'key' },
      schema: {
        operationId: 'getUsage',
        tags: ['account'],
        summary: "The caller's usage this month (not metered)",
        description:
          'Calls, billable calls, free allowance left and cost per operation in the current UTC calendar month, and the total. ' +
          'Money is a decimal string in the format of `X-Service-Cost`. Free, and not rate-limited.',
        security: BEARER_SECURITY,
        response: accountResponses({ description: "This month's usage.", content: json(usageResponseSchema, USAGE_EXAMPLE) }),
      },
    },
    async (request) => {
      const key = callerKey(request);
      const period = billingPeriod();
      let usage;
      try {
        usage = await options.meter.usage(key.id, period);
      } catch (error) {
        throw storeUnavailableError('meter', error);
      }
      let totalMicroUsd = 0;
      const operations = Object.fromEntries(
        OPERATION_IDS.map((operation) => {
          const { calls, billableCalls } = usage[operation] ?? { calls: 0, billableCalls: 0 };
          // Operations sharing an allowance (list units and batches) use it up together.
          const owner = allowanceOwner(operation);
          const allowance = key.freeAllowance[owner] ?? options.freeAllowances[owner];
          const used = allowancePool(operation).reduce((sum, member) => sum + (usage[member]?.calls ?? 0), 0);
          const cost = billableCalls * OPERATIONS[operation].priceMicroUsd;
          totalMicroUsd += cost;
          return [operation, { calls, billableCalls, freeRemaining: Math.max(0, allowance - used), costUsd: formatUsd(cost) }];
        }),
      );
      return { period, operations, totalCostUsd: formatUsd(totalMicroUsd) };
    },
  );
  done();
};
