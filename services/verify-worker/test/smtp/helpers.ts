import net from 'node:net';
import { afterEach } from 'vitest';
import type { SmtpSessionRequest, SmtpSessionResult } from '../../src/smtp/session.ts';
import { startSmtpServer, type RigSmtpServer, type SmtpServerScript } from '@svc/testkit';

/** Starts rig servers (by default on a free port of 127.0.0.1) and closes them after each test. */
export function useRig(): (script?: SmtpServerScript & { host?: string; port?: number }) => Promise<RigSmtpServer> {
  const servers: RigSmtpServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });
  return async (script = {}) => {
    const server = await startSmtpServer({ host: '127.0.0.1', port: 0, ...script });
    servers.push(server);
    return server;
  };
}

export function probe(
  server: { host: string; port: number },
  recipients: string[],
  extra: Partial<SmtpSessionRequest> = {},
): SmtpSessionRequest {
  return {
    host: server.host,
    port: server.port,
    servername: 'mx.rig.test',
    heloName: 'probe.verify.test',
    mailFrom: 'verify@probe.verify.test',
    recipients,
    connectTimeoutMs: 1000,
    commandTimeoutMs: 1000,
    ...extra,
  };
}

/** The recipients the session neither answered nor skipped: what its caller sends in another session. */
export function unanswered(request: SmtpSessionRequest, result: SmtpSessionResult): string[] {
  const settled = new Set([...result.rcpt.map((r) => r.address), ...result.skippedNeedsSmtpUtf8]);
  return request.recipients.filter((recipient) => !settled.has(recipient));
}

export const verbs = (lines: string[] | undefined): string[] => (lines ?? []).map((l) => (l.split(/[ :]/)[0] ?? '').toUpperCase());

/** Plain TCP servers for behaviours no sane scripted server has (hostile peers, a SOCKS proxy). */
export function useRawServers(): (onConnection: (socket: net.Socket) => void) => Promise<{ host: string; port: number }> {
  const servers: net.Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
  });
  return async (onConnection) => {
    const server = net.createServer((socket) => {
      socket.on('error', () => {});
      onConnection(socket);
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return { host: '127.0.0.1', port: (server.address() as net.AddressInfo).port };
  };
}
