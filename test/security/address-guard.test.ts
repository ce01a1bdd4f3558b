/**
 * The address guard at a real gateway process: a list's callback may only point to a global
 * unicast address, so every IPv4-compatible spelling (`::/96`), and the other IPv6 forms that
 * wrap or stand beside private IPv4, is refused when the list is created.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayProcess, type GatewayProcess } from './gateway-process.ts';

describe('callbacks to IPv4-compatible and other non-global addresses', () => {
  let gateway: GatewayProcess;
  beforeAll(async () => {
    gateway = await startGatewayProcess();
  });
  afterAll(async () => {
    await gateway?.stop();
  });

  it.each([
    'https://[::127.0.0.1]/cb',
    'https://[::7f00:1]/cb',
    'https://[::10.0.0.1]/cb',
    'https://[::169.254.169.254]/cb',
    'https://[::8.8.8.8]/cb',
    'https://[0:0:0:0:0:0:a00:1]/cb',
    'https://[::ffff:127.0.0.1]/cb',
    'https://[64:ff9b::7f00:1]/cb',
    'https://[2002:7f00:1::]/cb',
    'https://[fec0::1]/cb',
    'https://[100::1]/cb',
  ])('%s is refused', async (callbackUrl) => {
    const response = await fetch(`${gateway.baseUrl}/v1/email-verify/lists`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gateway.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ emails: ['ann@example.com'], callbackUrl }),
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: string; details?: { param?: string } };
    expect(body.error).toBe('invalid_parameter');
    expect(body.details?.param).toBe('callbackUrl');
  });
});
