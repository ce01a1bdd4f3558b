/** What may reach a log line: URLs and free text with addresses and keys redacted, repeated errors once per window. */
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ACCESS_LOG_FLUSH_MS, contentSummary, createLogger, redactUrl, scrubText } from '../src/logger.ts';
import { ERROR_LOG_WINDOW_MS, errorKind, rateLimitedLog } from '../src/error-log.ts';

const run = promisify(execFile);
const FIXTURE = 'libs/shared/telemetry/test/fixtures/access-log.ts';

describe('redactUrl', () => {
  it.each([
    ['/v1/email-verify/verify?email=ann%40example.com', '/v1/email-verify/verify?[redacted]'],
    ['/v1/email-verify/verify/batch?x=1', '/v1/email-verify/verify/batch?[redacted]'],
    ['/v1/qr/qr?text=hello&key=sk_abc123abc123', '/v1/qr/qr?text=hello&key=[redacted]'],
    [
      '/v1/qr/wifi?ssid=home&password=hunter2&API_KEY=x&access_token=y',
      '/v1/qr/wifi?ssid=home&password=[redacted]&API_KEY=[redacted]&access_token=[redacted]',
    ],
    ['/v1/qr/qr?text=mailto%3Aann%40example.com', '/v1/qr/qr?text=mailto%3A%5Bredacted%5D%40example.com'],
    ['/v1/qr/qr?text=sk_AAAAAAAAAAAAAAAA', '/v1/qr/qr?text=%5Bredacted%5D'],
    ['/v1/qr/qr?text=%73k%5FAAAAAAAAAAAAAAAA', '/v1/qr/qr?text=%5Bredacted%5D'],
    ['/v1/qr/qr?text=ann%2540example.com+x%40y.org', '/v1/qr/qr?text=ann%2540example.com%20%5Bredacted%5D%40y.org'],
    [
      '/v1/qr/qr?text=https%3A%2F%2Fexample.com%2Fa%3Fb%3D1%26c%3D2&scale=4',
      '/v1/qr/qr?text=https%3A%2F%2Fexample.com%2Fa%3Fb%3D1%26c%3D2&scale=4',
    ],
    ['/v1/qr/qr?text=%zz&flag', '/v1/qr/qr?text=%zz&flag'],
    // A credential's name spelt with escapes, or in another case, is still a credential.
    ['/v1/qr/qr?text=x&%6Bey=abc&Api-Key=def', '/v1/qr/qr?text=x&%6Bey=[redacted]&Api-Key=[redacted]'],
    ['/v1/qr/qr?text=a%2Bb&SECRET', '/v1/qr/qr?text=a%2Bb&SECRET'],
    ['/healthz', '/healthz'],
    // The QR data: its length and a short hash, never the text (an otpauth:// secret, a private link).
    ['/v1/qr/qr?data=hello', `/v1/qr/qr?data=[redacted:5c:2cf24dba5fb0]`],
    ['/v1/qr/qr?size=4&data=hello&key=sk_abc123abc123', `/v1/qr/qr?size=4&data=[redacted:5c:2cf24dba5fb0]&key=[redacted]`],
    ['/v1/qr/qr?data=h%C3%A9llo', `/v1/qr/qr?data=${contentSummary('héllo')}`],
  ])('2cf24dba5fb0', (url, logged) => expect(redactUrl(url)).toBe(logged));
});

describe('contentSummary', () => {
  it('gives the length in characters and 12 hex digits of the SHA-256, nothing of the text', () => {
    const secret = 'otpauth://totp/ACME:ann?secret=JBSWY3DPEHPK3PXP&issuer=ACME';
    const summary = contentSummary(secret);
    expect(summary).toMatch(/^\[redacted:\d+c:[0-9a-f]{12}\]$/);
    expect(summary).not.toContain('JBSWY3DPEHPK3PXP');
    expect(summary).toBe(contentSummary(secret));
    expect(summary).not.toBe(contentSummary(`${secret}x`));
  });
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

  it('rateLimitedLog: one line per kind and window, then how many were left out when the window ends', async () => {
    const { lines, logger } = capture();
    // The windows' clock: real time, moved ahead where the test would otherwise wait a window out.
    let skippedMs = 0;
    const report = rateLimitedLog(logger, 200, () => Date.now() + skippedMs);
    for (let i = 0; i < 50; i += 1) report('error', 'redis:ECONNREFUSED', { connection: 'gateway' }, 'Redis error');
    report('error', 'redis:ETIMEDOUT', { connection: 'gateway' }, 'Redis error');
    expect(lines).toHaveLength(2);
    // The count's line comes when the window ends.
    await expect.poll(() => lines.length, { timeout: 2_000, interval: 10 }).toBe(3);
    expect(lines[2]).toMatchObject({ connection: 'gateway', suppressed: 49, windowMs: 200, level: 50, msg: 'Redis error (repeated)' });
    // The count's line opened a window of its own: a report inside it is counted, not written.
    report('error', 'redis:ECONNREFUSED', { connection: 'gateway' }, 'Redis error');
    expect(lines).toHaveLength(3);
    await expect.poll(() => lines.length, { timeout: 2_000, interval: 10 }).toBe(4);
    expect(lines[3]).toMatchObject({ suppressed: 1 });
    // Past the window the count's line opened (nothing marks its end): a report after it is written as it is.
    skippedMs += 200;
    report('error', 'redis:ECONNREFUSED', { connection: 'gateway' }, 'Redis error');
    expect(lines).toHaveLength(5);
    expect(lines[4]).not.toHaveProperty('suppressed');
  });

  it("a log made without a window has the contract's 10 s", () => {
    const { lines, logger } = capture();
    let skippedMs = 0;
    const report = rateLimitedLog(logger, undefined, () => Date.now() + skippedMs);
    report('error', 'redis:ECONNRESET', {}, 'Redis error');
    skippedMs += ERROR_LOG_WINDOW_MS - 1_000;
    report('error', 'redis:ECONNRESET', {}, 'Redis error');
    expect(lines).toHaveLength(1);
    // Past 10 s: a new window, whose first report is written with the count.
    skippedMs += 1_000;
    report('error', 'redis:ECONNRESET', {}, 'Redis error');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({ suppressed: 1, windowMs: ERROR_LOG_WINDOW_MS });
  });

  it("a logger's error log: the window its composition root gave it (LOG_ERROR_WINDOW_MS), one set of windows for every component", async () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = createLogger(
      'info',
      'test',
      { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
      200,
    );
    // Two components handed the same logger, failing the same way: one line, then the count.
    const queue = logger.errorLog;
    const connection = logger.errorLog;
    queue('error', 'redis:ECONNREFUSED', {}, 'Redis error');
    connection('error', 'redis:ECONNREFUSED', {}, 'Redis error');
    expect(lines).toHaveLength(1);
    await expect.poll(() => lines.length, { timeout: 2_000, interval: 10 }).toBe(2);
    expect(lines[1]).toMatchObject({ suppressed: 1, windowMs: 200, msg: 'Redis error (repeated)' });
  });

  it('errorKind: the code, else the message without its numbers and ids', () => {
    expect(errorKind(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' }))).toBe('ECONNREFUSED');
    expect(errorKind(new Error('Missing lock for job 123. moveToFinished'))).toBe(
      errorKind(new Error('Missing lock for job 9. moveToFinished')),
    );
    expect(errorKind(new Error('job 0b5d7a3c-1f2e-4c1a-9b8e-3d2f1a0c9e7b failed'))).toBe('job <id> failed');
  });
});

describe('the access log', () => {
  it('writes what it buffered when closed', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', FIXTURE, 'close'], { timeout: 20_000 });
    expect(
      stdout
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { reqId: string }).reqId),
    ).toEqual(['r0', 'r1', 'r2']);
  });

  it(`brings a buffered line out while the process runs on (flushed every ${ACCESS_LOG_FLUSH_MS} ms)`, async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, 'idle'], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        child.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString()));
        child.once('exit', () => reject(new Error('exited without writing')));
      });
      expect(JSON.parse(line)).toMatchObject({ msg: 'request completed', statusCode: 200, name: 'gateway' });
    } finally {
      child.kill('SIGKILL');
    }
  });
});
