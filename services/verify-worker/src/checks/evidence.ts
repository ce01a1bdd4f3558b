/**
 * The evidence rule: what the replies of one mail server, read together, say about one domain's
 * mailboxes. Every probe of a domain carries a control, a local part that no one owns
 * (engine/control-address.ts).
 *
 * 1. The control is refused and a real mailbox of the domain is accepted by the same server:
 *    the server tells mailboxes apart and accepts the prober, so the domain is not catch-all,
 *    and a real address refused with the same kind of refusal as the control (same code, same
 *    enhanced status, and the same meaning when the table read the meaning from words) is
 *    unknown, whatever the wording (`control`). The domain's `postmaster@`, asked beside the
 *    control (RFC 5321 §4.5.1: every domain has it), is such a mailbox when none of the batch's
 *    is accepted, but only for refusals the table does not read as a block of the client.
 * 2. Every recipient, the control, postmaster and each real address, is refused with the same
 *    kind of refusal, and nothing is accepted: the refusal speaks of the client, not of each mailbox
 *    (`all_refused`). Except when the server said so with an RFC 3463 mailbox status (5.1.1
 *    user unknown, 5.2.1 disabled, ...): a server that answers `5.1.1` to every address of a
 *    list of stale addresses is telling the truth far more often than it is hiding a ban.
 * 3. Otherwise each reply means what the reply table says (`reply`).
 *
 * Where the server accepted the prober for a recipient of the domain (a real mailbox or the
 * control), a refusal that the table read as a block of the client (5.7.x) is about its own
 * mailbox, and its words say how when they do (`control`): Postfix refuses one recipient with
 * `554 5.7.1 ... Recipient address rejected: This account has been disabled`.
 *
 * The control also settles `catchAll`: accepted means catch-all; refused means not catch-all
 * when rule 1 holds or the table reads the refusal as an unknown mailbox; anything else leaves
 * it unknown (`null`). Temporary replies (4xx) are never compared: they say when, not what.
 */
import { isPermanent, readRcptReply, type RcptClass, type ReplyMeaning, type SmtpReply } from './smtp-replies.ts';

export type EvidenceBasis = 'reply' | 'control' | 'all_refused';

export interface DomainReplies {
  /** The control's reply, when the same server answered it. */
  control?: SmtpReply;
  /** The reply to the domain's `postmaster@`, a mailbox every domain must have, when the same server answered it. */
  postmaster?: SmtpReply;
  /** Real addresses of the domain and the replies the same server gave them. */
  mailboxes: ReadonlyMap<string, SmtpReply>;
}

export interface MailboxFinding {
  class: RcptClass;
  by: EvidenceBasis;
}

export interface DomainFindings {
  catchAll: boolean | null;
  mailboxes: Map<string, MailboxFinding>;
}

/** Two refusals are of the same kind when their codes and statuses match, and their read meaning when words decided it. */
function refusalKind(reply: SmtpReply, meaning: ReplyMeaning): string {
  return `${reply.code} ${reply.enhanced ?? '-'} ${meaning.basis === 'text' ? meaning.class : ''}`;
}

export function weighEvidence(replies: DomainReplies): DomainFindings {
  const read = new Map([...replies.mailboxes].map(([address, reply]) => [address, { reply, meaning: readRcptReply(reply) }]));
  const control = replies.control === undefined ? undefined : { reply: replies.control, meaning: readRcptReply(replies.control) };
  const mailboxes = new Map<string, MailboxFinding>(
    [...read].map(([address, { meaning }]) => [address, { class: meaning.class, by: 'reply' }]),
  );

  const anyAccepted = [...read.values()].some(({ meaning }) => meaning.class === 'accepted');
  const controlRefused = control !== undefined && isPermanent(control.reply) && control.meaning.class !== 'not_this_host';
  const controlKind = control === undefined ? undefined : refusalKind(control.reply, control.meaning);

  // The server took a recipient of this domain from the prober: a refusal read as a block of the
  // client is about its own mailbox, and its words say how when they do.
  if (anyAccepted || control?.meaning.class === 'accepted') {
    for (const [address, { reply, meaning }] of read) {
      const byWords = isPermanent(reply) && meaning.class === 'blocked' ? mailboxRefusalInWords(reply) : undefined;
      if (byWords !== undefined) mailboxes.set(address, { class: byWords, by: 'control' });
    }
  }

  // Postmaster accepted counts only for refusals that do not name a block of the client: servers
  // exempt postmaster from their blocklist checks (so that a blocked sender can still reach it).
  const postmasterAccepted = replies.postmaster !== undefined && readRcptReply(replies.postmaster).class === 'accepted';
  if (controlRefused && (anyAccepted || (postmasterAccepted && control.meaning.class !== 'blocked'))) {
    for (const [address, { reply, meaning }] of read)
      if (isPermanent(reply) && refusalKind(reply, meaning) === controlKind && (anyAccepted || meaning.class !== 'blocked'))
        mailboxes.set(address, { class: 'rejected_unknown', by: 'control' });
    return { catchAll: false, mailboxes };
  }

  const allSameRefusal =
    controlRefused &&
    read.size > 0 &&
    [...read.values()].every(({ reply, meaning }) => isPermanent(reply) && refusalKind(reply, meaning) === controlKind);
  if (allSameRefusal && control?.meaning.basis !== 'enhanced') {
    for (const address of read.keys()) mailboxes.set(address, { class: 'blocked', by: 'all_refused' });
    return { catchAll: null, mailboxes };
  }

  return { catchAll: catchAllFromControl(control?.meaning), mailboxes };
}

/**
 * What the words of a refusal read as a block of the client say of the mailbox (Postfix's
 * per-recipient `554 5.7.1 ... Recipient address rejected: This account has been disabled`), if
 * anything.
 */
function mailboxRefusalInWords(reply: SmtpReply): RcptClass | undefined {
  const byWords = readRcptReply({ code: reply.code, text: reply.text }).class;
  return byWords === 'disabled' || byWords === 'full' || byWords === 'rejected_unknown' ? byWords : undefined;
}

function catchAllFromControl(meaning: ReplyMeaning | undefined): boolean | null {
  if (meaning?.class === 'accepted') return true;
  if (meaning?.class === 'rejected_unknown') return false;
  return null;
}
