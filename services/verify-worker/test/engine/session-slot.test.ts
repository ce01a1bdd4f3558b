/**
 * The hand-over of a parked connection and its slot between the sessions of one process waiting
 * for a server (engine/session-slot.ts, smtp/idle-sessions.ts, LocalPriorityLimiter), step by
 * step on a real loopback connection: a batch waiting beside a list is handed the connection a
 * session parks, rather than the list, which could not take its slot over and would end it.
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { takeSessionSlot } from '../../src/engine/session-slot.ts';
import { LocalPriorityLimiter } from '../../src/engine/shared-host-limiter.ts';
import { SmtpChannel } from '../../src/smtp/channel.ts';
import { IdleSessions, type ParkedSession } from '../../src/smtp/idle-sessions.ts';

const HOST = '127.0.0.1';
const KEY = 'direct|127.0.0.1|25|probe.test|probe@probe.test';

/** Lets every callback already due run (promise reactions, then I/O and timers of this turn). */
const settle = () => new Promise((resolve) => setImmediate(resolve));

/** Settled yet? Without waiting for it. */
async function state<T>(promise: Promise<T>): Promise<'pending' | T> {
  return Promise.race([promise, settle().then(() => 'pending' as const)]);
}

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A loopback server recording what it receives; it hangs up on QUIT, as a mail server does. */
async function server() {
  const received: string[] = [];
  const sockets = new Set<net.Socket>();
  const listener = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('data', (data) => {
      received.push(data.toString());
      if (data.toString().includes('QUIT')) socket.end();
    });
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => listener.listen(0, HOST, resolve));
  const address = listener.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  const { port } = address;
  closers.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => listener.close(resolve));
  });
  const connect = async (): Promise<SmtpChannel> => {
    const socket = net.connect(port, HOST);
    await new Promise((resolve) => socket.once('connect', resolve));
    const channel = new SmtpChannel(socket);
    closers.unshift(() => Promise.resolve(channel.destroy()));
    return channel;
  };
  return { received, connect, open: () => sockets.size };
}

const parkedOn = (channel: SmtpChannel, slot: ParkedSession['slot']): ParkedSession => ({
  channel,
  keywords: new Set(),
  resets: 0,
  openedAt: Date.now(),
  slot,
});

describe('a connection parked while sessions wait for its server', () => {
  it('goes to a batch waiting beside a list (one connection allowed): reused, not ended and reopened', async () => {
    const mail = await server();
    const limiter = new LocalPriorityLimiter(1);
    const idle = new IdleSessions(10_000, 1);
    const signal = new AbortController().signal;
    // A list session holds the one slot; another list session, then a batch, wait for the server.
    const held = await limiter.for('list').acquire(HOST, signal);
    const channel = await mail.connect();
    const list = takeSessionSlot(limiter.for('list'), idle, KEY, HOST, signal);
    await settle();
    const batch = takeSessionSlot(limiter.for('batch'), idle, KEY, HOST, signal);
    await settle();

    // The list session ends cleanly and parks its connection, with its slot.
    expect(idle.park(KEY, parkedOn(channel, held))).toBe(true);

    const batchGot = await state(batch);
    if (batchGot === 'pending') throw new Error('the batch still waits, though a connection was parked for its server');
    const { resume } = batchGot;
    // The batch carries on over the same connection: no QUIT sent, no new connection needed.
    expect(resume?.channel).toBe(channel);
    expect(channel.reusable).toBe(true);
    expect(mail.received.join('')).not.toContain('QUIT');
    // The list waits behind the batch: one connection, one slot.
    expect(await state(list)).toBe('pending');
    expect(mail.open()).toBe(1);

    // The batch's session over (closed, not parked): the slot goes to the list.
    idle.end(resume!);
    const listGot = await list;
    expect(listGot.resume).toBeUndefined();
    expect(mail.received.join('')).toContain('QUIT');
    listGot.slot.release();
  });

  it('is handed to waiting batches first, then lists, each in order of arrival', async () => {
    const mail = await server();
    const idle = new IdleSessions(10_000, 4);
    const channel = await mail.connect();
    const order: string[] = [];
    const wait = (name: string, first: boolean) => void idle.wait(KEY, first).handed.then(() => order.push(name));
    wait('list 1', false);
    wait('batch 1', true);
    wait('list 2', false);
    wait('batch 2', true);
    for (let i = 0; i < 4; i++) expect(idle.park(KEY, parkedOn(channel, undefined))).toBe(true);
    await settle();
    expect(order).toEqual(['batch 1', 'batch 2', 'list 1', 'list 2']);
  });
});
