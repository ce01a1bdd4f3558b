export { parseAddress, type ParsedAddress, type SyntaxFailure, type SyntaxFailureKind } from './syntax.ts';
export { isDisposableDomain, isFreeProvider } from './domain-lists.ts';
export { isRoleAccount } from './role.ts';
export { suggestDomain } from './suggestion.ts';
export {
  classifySessionReply,
  isPermanent,
  isTransient,
  readRcptReply,
  RCPT_REPLY_TABLE,
  type RcptClass,
  type ReplyBasis,
  type ReplyMeaning,
  type SmtpReply,
} from './smtp-replies.ts';
export { weighEvidence, type DomainFindings, type DomainReplies, type EvidenceBasis, type MailboxFinding } from './evidence.ts';
export { retryAfterSeconds } from './retry-hint.ts';
export { decide, type AddressFacts, type Decision, type DnsOutcome, type SmtpOutcome } from './verdict.ts';
export { score, clampToBand, SCORE_BANDS, REASON_POINTS, ADJUSTMENTS } from './score.ts';
