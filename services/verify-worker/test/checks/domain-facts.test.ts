import { describe, expect, it } from 'vitest';
import { isDisposableDomain, isFreeProvider, isRoleAccount, suggestDomain } from '../../src/checks/index.ts';

describe('disposable and free providers', () => {
  it('knows disposable domains and their subdomains', () => {
    expect(isDisposableDomain('mailinator.com')).toBe(true);
    expect(isDisposableDomain('x.mailinator.com')).toBe(true);
    expect(isDisposableDomain('10minutemail.com')).toBe(true);
    expect(isDisposableDomain('gmail.com')).toBe(false);
    expect(isDisposableDomain('example.com')).toBe(false);
  });

  it('knows free mailbox providers, and never calls a disposable domain free', () => {
    expect(isFreeProvider('gmail.com')).toBe(true);
    expect(isFreeProvider('yahoo.com')).toBe(true);
    expect(isFreeProvider('example.com')).toBe(false);
    expect(isFreeProvider('mailinator.com')).toBe(false);
  });
});

describe('role accounts', () => {
  it.each(['postmaster', 'Info', 'sales', 'no-reply', 'noreply', 'customer.service', 'support+eu', 'WEBMASTER'])(
    '%s is a role',
    (local) => {
      expect(isRoleAccount(local)).toBe(true);
    },
  );
  it.each(['alice', 'info.alice', 'salesman', 'bob+info'])('%s is a person', (local) => expect(isRoleAccount(local)).toBe(false));
});

// The suggestion is a domain: the verifier pairs it with the entry's own local part (batch-contract.test.ts).
describe('typo suggestions', () => {
  it.each([
    ['gmial.com', 'gmail.com'],
    ['hotmial.com', 'hotmail.com'],
    ['gmail.con', 'gmail.com'],
    ['yaho.com', 'yahoo.com'],
  ])('%s → %s', (domain, expected) => expect(suggestDomain(domain)).toBe(expected));

  it.each(['gmail.com', 'yahoo.co.uk', 'example.com', 'mycompany.co', 'acme-industries.de'])('no suggestion for %s', (domain) => {
    expect(suggestDomain(domain)).toBeUndefined();
  });

  it('never throws, whatever the string (the library URI-encodes its input)', () => {
    expect(() => suggestDomain('gm\ud800ial.com')).not.toThrow();
    expect(suggestDomain('gm\ud800ial.com')).toBeUndefined();
  });
});
