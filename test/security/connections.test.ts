/**
 * Connections against a real gateway process (decisions, "Fair share and hostile input"): a
 * request refused before its body was read is answered and its connection closed, not drained
 * for minutes; a list upload's long body allowance applies only once its key is accepted; idle
 * keep-alive connections close after KEEP_ALIVE_TIMEOUT_MS; headers must arrive within 10 s.
 * Each case prints how long the connection lived.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayProcess, type GatewayProcess } from './gateway-process.ts';
import { openConnection } from './raw-connection.ts';

const LISTS = '/v1/email-verify/lists';
const BATCH = '/v1/email-verify/verify/batch';
/** What "closed at once" allows on a loaded machine: the answer's flush and the gateway's linger. */
const PROMPT_CLOSE_MS = 4_000;

describe.concurrent('connections of refused and idle requests', () => {
  let gateway: GatewayProcess;
  beforeAll(async () => {
    gateway = await startGatewayProcess();
  });
  afterAll(async () => {
    await gateway?.stop();
  });

  it('an unauthenticated list upload that trickles: 401 at once, and the connection closed', async () => {
    const connection = openConnection(gateway.baseUrl);
    connection.socket.write(
      `POST ${LISTS} HTTP/1.1\r\nHost: x\r\nContent-Type: text/csv\r\nContent-Length: ${16 * 1024 * 1024}\r\n\r\nemail\n`,
    );
    connection.trickle('a@example.com\n', 200);
    const closedAt = await connection.ended;
    console.log(
      `unauthenticated trickling upload: answered after ${connection.answeredAt()! - connection.started} ms, closed after ${closedAt - connection.started} ms`,
    );
    expect(connection.received()).toMatch(/^HTTP\/1\.1 401 /);
    expect(connection.received()).toMatch(/\r\nconnection: close\r\n/i);
    expect(closedAt - connection.started).toBeLessThan(PROMPT_CLOSE_MS);
  });

  it('a body refused on its declared length: the 413 arrives whole (no reset) and the connection closes', async () => {
    const connection = openConnection(gateway.baseUrl);
    const length = 17 * 1024 * 1024;
    connection.socket.write(
      `POST ${LISTS} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${gateway.key}\r\nContent-Type: text/csv\r\nContent-Length: ${length}\r\n\r\n`,
    );
    // The client goes on sending as fast as it can, as an upload tool does before it reads.
    const chunk = Buffer.alloc(256 * 1024, 'x');
    let sent = 0;
    while (sent < length && connection.socket.writable && connection.answeredAt() === undefined) {
      if (!connection.socket.write(chunk))
        await Promise.race([new Promise((resolve) => connection.socket.once('drain', resolve)), connection.ended]);
      sent += chunk.length;
    }
    const closedAt = await connection.ended;
    expect(connection.received()).toMatch(/^HTTP\/1\.1 413 /);
    expect(connection.received()).toMatch(/\r\nconnection: close\r\n/i);
    expect(connection.received()).toMatch(/"error":"payload_too_large"/);
    expect(closedAt - connection.started).toBeLessThan(PROMPT_CLOSE_MS);
  });

  it('a batch whose body trickles: 408 at 30 s, and the connection closed with it', { timeout: 60_000 }, async () => {
    const connection = openConnection(gateway.baseUrl);
    connection.socket.write(
      `POST ${BATCH} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${gateway.key}\r\nContent-Type: application/json\r\nContent-Length: 60000\r\n\r\n{"emails":[`,
    );
    connection.trickle('"a@example.com",', 1_000);
    const closedAt = await connection.closed;
    const answeredMs = connection.answeredAt()! - connection.started;
    console.log(`trickling batch: answered after ${answeredMs} ms, closed after ${closedAt - connection.started} ms`);
    expect(connection.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(connection.received()).toMatch(/\r\nconnection: close\r\n/i);
    expect(answeredMs).toBeGreaterThanOrEqual(29_000);
    expect(closedAt - connection.started - answeredMs).toBeLessThan(PROMPT_CLOSE_MS);
  });

  it('an idle keep-alive connection closes after 5 s (KEEP_ALIVE_TIMEOUT_MS)', { timeout: 30_000 }, async () => {
    const connection = openConnection(gateway.baseUrl);
    connection.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    const closedAt = await connection.ended;
    const idleMs = closedAt - connection.answeredAt()!;
    console.log(`idle keep-alive connection: closed ${idleMs} ms after its answer`);
    expect(connection.received()).toMatch(/^HTTP\/1\.1 200 /);
    expect(idleMs).toBeGreaterThanOrEqual(4_500);
    expect(idleMs).toBeLessThan(6_000);
  });

  it('headers that never finish: 408 at 10 s and closed', { timeout: 30_000 }, async () => {
    const connection = openConnection(gateway.baseUrl);
    connection.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
    connection.trickle('X-Drip: 1\r\n', 1_000);
    const closedAt = await connection.ended;
    console.log(`trickling headers: closed after ${closedAt - connection.started} ms`);
    expect(connection.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(closedAt - connection.started).toBeGreaterThanOrEqual(9_500);
    expect(closedAt - connection.started).toBeLessThan(10_000 + PROMPT_CLOSE_MS);
  });
});
