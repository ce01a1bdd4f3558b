/**
 * Progress of a job across Redis (job protocol v2, docs/architecture.md "Job messages"): a job
 * whose envelope says `progress: true` (its gateway has a caller following it, an MCP tool call
 * with a progressToken) is reported by its worker to the gateway's inbox, beside its answer, as
 * `{ v, jobId, progress: { done, total } }`. Only a gateway of v2 or later asks, so an older
 * gateway never reads one; a v1 worker ignores the flag, and its jobs just report nothing.
 */
import { z } from 'zod';
import { versionField } from './job-protocol.ts';

const count = z.number().int().min(0);

const progressMessageSchema = z.object({
  v: versionField,
  jobId: z.string(),
  progress: z.object({ done: count, total: count }),
});

export type ProgressMessage = z.infer<typeof progressMessageSchema>;

/**
 * A progress message as its inbox holds it, or undefined when `message` is not one. It has no
 * `ok`, so no reader takes it for an answer, and it starts with `{`, as whole-JSON answers do.
 */
export function parseProgressMessage(message: string): ProgressMessage | undefined {
  if (!message.startsWith('{') || !message.includes('"progress"')) return undefined;
  try {
    const parsed = progressMessageSchema.safeParse(JSON.parse(message));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
