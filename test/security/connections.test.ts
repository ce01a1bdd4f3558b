/**
 * Connections against a real gateway process (decisions, "Fair share and hostile input"): a
 * request refused before its body was read is answered and its connection closed, not drained
 * for minutes; a list upload's long body allowance applies only once its key is accepted; idle
 * keep-alive connections close after KEEP_ALIVE_TIMEOUT_MS; headers must arrive within
 * HEADERS_TIMEOUT_MS, a body within REQUEST_BODY_TIMEOUT_MS. The gateway runs with these set
 * short (the defaults, 5, 10 and 30 s, are the configuration's, checked against the README by
 * test/docs/configuration.test.ts): the mechanism is the same, the file takes seconds instead of
 * half a minute. Each case prints how long the connection lived.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayProcess, type GatewayProcess } from './gateway-process.ts';
import { openConnection } from './raw-connection.ts';

const LISTS = '/v1/email-verify/lists';
const BATCH = '/v1/email-verify/verify/batch';
/** What "closed at once" allows on a loaded machine: the answer's flush and the gateway's linger. */
const PROMPT_CLOSE_MS = 4_000;
/** The gateway's limits here: each one well apart from the others and from PROMPT_CLOSE_MS's checks. */
const KEEP_ALIVE_MS = 2_000;
const HEADERS_MS = 2_000;
const BODY_MS = 3_000;

describe.concurrent('connections of refused and idle requests', () => {
  let gateway: GatewayProcess;
  beforeAll(async () => {
    gateway = await startGatewayProcess({
      KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_MS),
      HEADERS_TIMEOUT_MS: String(HEADERS_MS),
      REQUEST_BODY_TIMEOUT_MS: String(BODY_MS),
    });
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

  it('a batch whose body trickles: 408 at REQUEST_BODY_TIMEOUT_MS, and the connection closed with it', async () => {
    const connection = openConnection(gateway.baseUrl);
    connection.socket.write(
      `POST ${BATCH} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${gateway.key}\r\nContent-Type: application/json\r\nContent-Length: 60000\r\n\r\n{"emails":[`,
    );
    connection.trickle('"a@example.com",', 300);
    const closedAt = await connection.closed;
    const answeredMs = connection.answeredAt()! - connection.started;
    console.log(`trickling batch: answered after ${answeredMs} ms, closed after ${closedAt - connection.started} ms`);
    expect(connection.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(connection.received()).toMatch(/\r\nconnection: close\r\n/i);
    expect(answeredMs).toBeGreaterThanOrEqual(BODY_MS - 100);
    expect(closedAt - connection.started - answeredMs).toBeLessThan(PROMPT_CLOSE_MS);
  });

  it('an idle keep-alive connection closes after KEEP_ALIVE_TIMEOUT_MS', async () => {
    const connection = openConnection(gateway.baseUrl);
    connection.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    const closedAt = await connection.ended;
    const idleMs = closedAt - connection.answeredAt()!;
    console.log(`idle keep-alive connection: closed ${idleMs} ms after its answer`);
    expect(connection.received()).toMatch(/^HTTP\/1\.1 200 /);
    expect(idleMs).toBeGreaterThanOrEqual(KEEP_ALIVE_MS - 500);
    expect(idleMs).toBeLessThan(KEEP_ALIVE_MS + 1_000);
  });

  it('headers that never finish: 408 at HEADERS_TIMEOUT_MS and closed', async () => {
    const connection = openConnection(gateway.baseUrl);
    connection.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
    connection.trickle('X-Drip: 1\r\n', 300);
    const closedAt = await connection.ended;
    console.log(`trickling headers: closed after ${closedAt - connection.started} ms`);
    expect(connection.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(closedAt - connection.started).toBeGreaterThanOrEqual(HEADERS_MS - 500);
    expect(closedAt - connection.started).toBeLessThan(HEADERS_MS + PROMPT_CLOSE_MS);
  });
});
