/**
 * Tool arguments are validated inside each tool with the REST schemas, so that a bad argument
 * answers the contract's error object. The SDK validates `inputSchema` itself before the tool
 * runs and would answer its own text first, so the schema it is given accepts any object while
 * advertising (through zod's per-schema JSON Schema override) the real schema to clients.
 */
import { z } from 'zod';

/**
 * One per real schema: the tool servers are made per MCP request, and converting a schema to JSON
 * Schema took 0.2 to 1 ms each time, for every tool of every request.
 */
const advertised = new WeakMap<z.ZodObject, z.ZodObject>();

export function advertisedInput(real: z.ZodObject): z.ZodObject {
  const known = advertised.get(real);
  if (known !== undefined) return known;
  // The same conversion the SDK applies to input schemas (draft-7, input side of transforms).
  const { $schema: _ignored, ...json } = z.toJSONSchema(real, { target: 'draft-7', io: 'input' });
  const permissive = z.looseObject({});
  // A copy each time: zod's emitter may write into the schema object it is handed.
  permissive._zod.toJSONSchema = () => structuredClone(json);
  advertised.set(real, permissive);
  return permissive;
}

/** Arguments checked by the real schema; failures become the contract's error, as in REST. */
export function parseArguments<T extends z.ZodType>(schema: T, args: unknown, toError: (error: z.ZodError) => Error): z.infer<T> {
  const parsed = schema.safeParse(args);
  if (!parsed.success) throw toError(parsed.error);
  return parsed.data;
}
