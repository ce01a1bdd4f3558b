import { describe, expect, it } from 'vitest';
import { NEGATIVE_MAX_SECONDS, NO_SOA_SECONDS, negativeSeconds, positiveSeconds } from '../../src/dns/answer-ttl.ts';

const soa = (ttl: number, minimum: number) => ({ type: 'SOA', name: 'example.test', ttl, data: { mname: 'ns', rname: 'h', minimum } });
const mx = (ttl: number) => ({ type: 'MX', name: 'example.test', ttl, data: { preference: 10, exchange: 'mx.example.test' } });

describe('how long an answer is kept', () => {
  it('negative answers: the lesser of the SOA TTL and its MINIMUM (RFC 2308 §5), at most 15 minutes', () => {
    expect(negativeSeconds([soa(3600, 2)], 3600)).toBe(2);
    expect(negativeSeconds([soa(30, 300)], 3600)).toBe(30);
    expect(negativeSeconds([soa(86400, 86400)], 86_400)).toBe(NEGATIVE_MAX_SECONDS);
    expect(negativeSeconds([soa(3600, 600)], 120)).toBe(120);
  });

  it('a negative answer without SOA is kept briefly; none at all when caching is off', () => {
    expect(negativeSeconds([], 3600)).toBe(NO_SOA_SECONDS);
    expect(negativeSeconds([], 0)).toBe(0);
  });

  it('positive answers: their least TTL, at most a day and the configured bound', () => {
    expect(positiveSeconds([mx(300), mx(60)], 86_400)).toBe(60);
    expect(positiveSeconds([mx(604_800)], 10 * 86_400)).toBe(86_400);
    expect(positiveSeconds([mx(7200)], 3600)).toBe(3600);
    expect(positiveSeconds([], 3600)).toBe(0);
  });
});
