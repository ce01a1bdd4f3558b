import { OPERATION_IDS, formatUsd } from '@svc/contracts';
import { storeUnavailableError } from '@svc/jobs';
import { billingPeriod, monthlyBill, type FreeAllowances, type Meter } from '@svc/metering';
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { USAGE_EXAMPLE } from '../openapi-examples.ts';
import { accountResponses, json, usageResponseSchema } from '../openapi-schemas.ts';
import { BEARER_SECURITY, callerKey } from './guards.ts';

export const usageRoutes: FastifyPluginCallbackZod<{ meter: Meter; freeAllowances: FreeAllowances }> = (app, options, done) => {
  app.get(
    '/v1/usage',
    {
      config: { auth: 'key' },
      schema: {
        operationId: 'getUsage',
        tags: ['account'],
        summary: "The caller's usage this month (not metered)",
        description:
          'Calls, billable calls, free allowance left, unit price and cost per operation in the current UTC calendar month (lists: ' +
          'the distinct addresses processed and the units of 100 they were billed in), each free allowance once (batches and lists ' +
          'share one), and the total so far. ' +
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
      const bill = monthlyBill(usage, key.freeAllowance, options.freeAllowances);
      const operations = Object.fromEntries(
        OPERATION_IDS.map((operation) => {
          const { costMicroUsd, priceMicroUsd, ...counts } = bill.operations[operation];
          return [operation, { ...counts, costUsd: formatUsd(costMicroUsd), priceUsd: formatUsd(priceMicroUsd) }];
        }),
      );
      return { period, operations, allowances: bill.allowances, totalCostUsd: formatUsd(bill.totalMicroUsd) };
    },
  );
  done();
};
