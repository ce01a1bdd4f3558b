/**
 * The unit tier's guard (no-io.ts) itself, run only by `npm run test:unit`: outside that tier the
 * guard is not loaded (it would stop the integration tests in the same worker).
 */
import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { lookup } from 'node:dns/promises';
import { createServer } from 'node:http';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';

describe('the unit tier refuses I/O', () => {
  it('a TCP connection, a listening server and a UDP socket', () => {
    expect(() => connect(6379, '127.0.0.1')).toThrow(/unit tier allows no network connection/);
    expect(() => createServer().listen(0)).toThrow(/unit tier allows no listening socket/);
    expect(() => createSocket('udp4').bind(0)).toThrow(/unit tier allows no UDP socket/);
  });

  it('fetch, name resolution and a child process', async () => {
    const failure: unknown = await fetch('http://127.0.0.1:6399/').catch((error: unknown) => error);
    expect(failure instanceof Error && String(failure.cause)).toMatch(/unit tier allows no network connection/);
    expect(() => lookup('localhost')).toThrow(/unit tier allows no name resolution/);
    expect(() => spawn('true')).toThrow(/unit tier allows no child process/);
  });
});
