import { describe, expect, it } from 'vitest';
import { refusesTheClient } from '../../src/checks/refused-client.ts';

describe('a refusal that names the client', () => {
  it.each([
    [554, '5.7.1', 'Service unavailable; Client host [203.0.113.9] blocked using zen.spamhaus.org'],
    [550, '5.7.1', 'Mail from 203.0.113.9 refused - see http://www.spamhaus.org/query/ip/203.0.113.9'],
    [550, '5.7.606', 'Access denied, banned sending IP [203.0.113.9]'],
    [554, undefined, 'Your IP address is blacklisted'],
    [550, '5.7.1', 'Message rejected: sender IP listed in RBL'],
    [554, undefined, 'rejected because of poor reputation of your sending server'],
  ])('%i %s %s', (code, enhanced, text) => {
    expect(refusesTheClient({ code, ...(enhanced === undefined ? {} : { enhanced }), text })).toBe(true);
  });

  it.each([
    [550, '5.1.1', 'User unknown'],
    [550, '5.7.1', 'Relaying denied'],
    [451, '4.7.1', 'Greylisted, please try again later: client [203.0.113.9]'],
    [421, '4.7.0', 'Temporarily rejected. Listed on zen.spamhaus.org'],
    [250, undefined, 'OK'],
  ])('not %i %s %s', (code, enhanced, text) => {
    expect(refusesTheClient({ code, ...(enhanced === undefined ? {} : { enhanced }), text })).toBe(false);
  });
});
