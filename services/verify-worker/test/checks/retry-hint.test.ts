import { describe, expect, it } from 'vitest';
import { retryAfterSeconds } from '../../src/checks/index.ts';

describe('retry delay stated in a reply', () => {
  it.each<[string, number | undefined]>([
    ['4.7.1 Greylisted, try again in 300 seconds', 300],
    ['4.7.1 <a@b>: Recipient address rejected: Greylisted for 5 minutes', 300],
    ['Please retry after 60s', 60],
    ['4.2.0 Greylisting in action, please come back in 00:05:00', 300],
    ['Try again in 2 hours', 7_200],
    ['Bitte versuchen Sie es in 10 Minuten erneut', 600],
    ['4.7.1 Greylisted, please try again later', undefined],
    ['Try again later (code 451 4.7.1)', undefined],
    ['Mailbox full, 5 messages waiting', undefined],
    ['try again in 9 years', undefined],
    ['try again in 99999 hours', undefined],
  ])('%s → %s', (text, expected) => expect(retryAfterSeconds(text)).toBe(expected));
});
