/**
 * What a domain's controls showed (the random address and `postmaster@`, engine/verifier.ts),
 * kept with the domain's facts (`VERIFY_DOMAIN_CACHE_TTL_S`, decisions "Politeness at volume"),
 * so that repeated batches to one domain do not ask them again. Kept only for a definite answer
 * (2xx or 5xx to the control) from a server of the same MX set; holds no address of a caller
 * (the control's local part is the verifier's own).
 */
import { z } from 'zod';
import type { SmtpReply } from '../checks/index.ts';

export interface ControlEvidence {
  /** The MX set's host names, joined: evidence from another MX set is not used. */
  mxSet: string;
  /** Address of the server that answered. */
  server: string;
  control: SmtpReply;
  postmaster?: SmtpReply;
}

const replySchema = z.object({ code: z.number().int(), enhanced: z.string().max(16).optional(), text: z.string().max(2_048) });
export const controlEvidenceSchema = z.object({
  mxSet: z.string().max(4_096),
  server: z.string().max(64),
  control: replySchema,
  postmaster: replySchema.optional(),
});

/** A control answer worth keeping: the server said yes or no for good (not 4xx, not a cut). */
export const definite = (reply: SmtpReply): boolean => (reply.code >= 200 && reply.code < 300) || (reply.code >= 500 && reply.code < 600);
