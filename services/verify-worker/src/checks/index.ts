export { parseAddress, normaliseForDedup, type ParsedAddress, type SyntaxFailure, type SyntaxFailureKind } from './syntax.ts';
export { isDisposableDomain, isFreeProvider } from './domain-lists.ts';
export { isRoleAccount } from './role.ts';
export { suggestAddress } from './suggestion.ts';
export { classifyRcptReply, classifySessionReply, RCPT_REPLY_TABLE, type RcptClass, type Reply } from './smtp-replies.ts';
export { decide, type AddressFacts, type Decision, type DnsOutcome, type SmtpOutcome } from './verdict.ts';
export { score, SCORE_BANDS, REASON_POINTS, ADJUSTMENTS } from './score.ts';
