/**
 * Evidence reused across batches: an idle session kept VERIFY_SMTP_SESSION_IDLE_MS carries the
 * next batch to the same server after `RSET` (no new connection, no new greeting), and is ended
 * with QUIT once idle that long; the domain's controls answered in the first batch are not asked
 * again in the second; verdicts stay those of fresh sessions.
 */
import { describe, expect, it } from 'vitest';
import { waitUntil } from '@svc/testkit';
import { mailDomain, useWorld, verdicts } from '../engine/world.ts';

const known = (domain: string, ...locals: string[]) => locals.map((local) => `${local}@${domain}`);
const world = useWorld(
  { ...mailDomain('idle.test', '127.0.0.220'), ...mailDomain('catch.test', '127.0.0.221') },
  {
    '127.0.0.220': { users: [...known('idle.test', 'ann', 'bob', 'carl'), 'postmaster@idle.test'] },
    '127.0.0.221': { catchAll: true },
  },
);
const call = () => ({ deadlineAt: Date.now() + 5_000, signal: new AbortController().signal });
const rcpts = (commands: string[][]) => commands.flat().filter((line) => line.startsWith('RCPT'));

describe('evidence reused across batches', () => {
  it('the next batch to the same server reuses the idle session after RSET and skips the known controls; QUIT once idle', async () => {
    const server = world.smtp.get('127.0.0.220')!;
    const verifier = world.verifier({ VERIFY_SMTP_SESSION_IDLE_MS: '600' });
    const first = await verifier.verify(known('idle.test', 'ann', 'zed'), call());
    expect(verdicts(first)).toEqual({ 'ann@idle.test': 'deliverable/accepted_email', 'zed@idle.test': 'undeliverable/rejected_email' });
    const second = await verifier.verify(known('idle.test', 'bob', 'yan'), call());
    expect(verdicts(second)).toEqual({ 'bob@idle.test': 'deliverable/accepted_email', 'yan@idle.test': 'undeliverable/rejected_email' });
    expect(server.connections).toBe(1);
    const lines = server.commands[0]!;
    expect(lines.filter((line) => line.startsWith('EHLO'))).toHaveLength(1);
    expect(lines).toContain('RSET');
    // Controls (random address, postmaster) once, in the first batch: 4 + 2 RCPTs, not 4 + 4.
    expect(rcpts(server.commands)).toHaveLength(6);
    await waitUntil(() => server.open === 0, 3_000, 'the idle session to end');
    expect(server.commands[0]!.at(-1)).toBe('QUIT');
    const third = await verifier.verify(known('idle.test', 'carl'), call());
    expect(verdicts(third)).toEqual({ 'carl@idle.test': 'deliverable/accepted_email' });
    expect(server.connections).toBe(2);
  });

  it('a catch-all domain stays catch-all when its control is taken from an earlier batch', async () => {
    const verifier = world.verifier({ VERIFY_SMTP_SESSION_IDLE_MS: '600' });
    await verifier.verify(['a@catch.test'], call());
    const again = await verifier.verify(['b@catch.test'], call());
    expect(verdicts(again)).toEqual({ 'b@catch.test': 'risky/accept_all' });
    expect(again[0]?.checks.catchAll).toBe(true);
  });
});
