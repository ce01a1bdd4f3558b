/** What may reach a log line: URLs and free text with addresses and keys redacted, repeated errors once per window. */
import { describe, expect, it } from 'vitest';
import { createLogger, rateLimitedLog, redactUrl, scrubText } from '../src/logger.ts';

describe('redactUrl', () => {
  it.each([
    ['/v1/email-verify/verify?email=ann%40example.com', '/v1/email-verify/verify?[redacted]'],
    ['/v1/email-verify/verify/batch?x=1', '/v1/email-verify/verify/batch?[redacted]'],
    ['/v1/qr/qr?data=hello&key=sk_abc123abc123', '/v1/qr/qr?data=hello&key=[redacted]'],
    [
      '/v1/qr/wifi?ssid=home&password=hunter2&API_KEY=x&access_token=y',
      '/v1/qr/wifi?ssid=home&password=[redacted]&API_KEY=[redacted]&access_token=[redacted]',
    ],
    ['/v1/qr/qr?data=mailto%3Aann%40example.com', '/v1/qr/qr?data=mailto%3A%5Bredacted%5D%40example.com'],
    ['/v1/qr/qr?data=sk_AAAAAAAAAAAAAAAA', '/v1/qr/qr?data=%5Bredacted%5D'],
    ['/v1/qr/qr?data=%zz&flag', '/v1/qr/qr?data=%zz&flag'],
    ['/healthz', '/healthz'],
  ])('%s', (url, logged) => expect(redactUrl(url)).toBe(logged));
});

it('scrubText keeps the domain of an address and nothing of a key', () => {
  expect(scrubText('550 5.1.1 <bob@example.com>: unknown; key sk_0123456789abcdef')).toBe(
    '550 5.1.1 <[redacted]@example.com>: unknown; key [redacted]',
  );
});

describe('the logger', () => {
  const capture = () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = createLogger('info', 'test', { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    return { lines, logger };
  };

  it('redacts request URLs, address fields and addresses in messages and errors', () => {
    const { lines, logger } = capture();
    logger.info({ req: { method: 'GET', url: '/v1/email-verify/verify?email=a%40b.co' } }, 'incoming request');
    logger.info({ email: 'a@b.co', emails: ['a@b.co'], password: 'x' }, 'checked c@d.org');
    logger.error({ err: new Error('RCPT <e@f.net> refused') }, 'failed');
    const text = JSON.stringify(lines);
    for (const secret of ['a%40b.co', 'a@b.co', 'c@d.org', 'e@f.net', '"x"']) expect(text).not.toContain(secret);
    expect(lines[0]).toMatchObject({ req: { url: '/v1/email-verify/verify?[redacted]' } });
  });

  it('rateLimitedLog: one line per kind and window, then how many were left out', async () => {
    const { lines, logger } = capture();
    const report = rateLimitedLog(logger, 200);
    for (let i = 0; i < 50; i += 1) report('error', 'redis:ECONNREFUSED', { connection: 'gateway' }, 'Redis error');
    report('error', 'redis:ETIMEDOUT', { connection: 'gateway' }, 'Redis error');
    expect(lines).toHaveLength(2);
    await new Promise((resolve) => setTimeout(resolve, 250));
    report('error', 'redis:ECONNREFUSED', { connection: 'gateway' }, 'Redis error');
    expect(lines).toHaveLength(3);
    expect(lines[2]).toMatchObject({ connection: 'gateway', suppressedSinceLast: 49, level: 50 });
  });
});
