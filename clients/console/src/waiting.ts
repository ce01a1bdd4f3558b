/**
 * The waiting panel's sentences: the shared formatter (@svc/contracts/rules, list-waiting.ts),
 * which verify-list's progress line uses too, so the console and the client say one thing.
 */
export { inTime, timeLeft, waitingLines, type WaitingState } from '@svc/contracts/rules';
