/**
 * A one-domain scripted mail world for gateway-level tests: a DNS server and one SMTP server on
 * a 127.0.0.x address, plus the verifier environment that points at them.
 */
import { startDnsServer, type RigDnsServer } from './dns-server.ts';
import { findFreePort, startSmtpServer, type RigSmtpServer } from './smtp-server.ts';

export interface MailRig {
  env: Record<string, string>;
  dns: RigDnsServer;
  smtp: RigSmtpServer;
  close(): Promise<void>;
}

export async function startMailRig(domain: string, host: string, users: string[]): Promise<MailRig> {
  const dns = await startDnsServer({ [domain]: { MX: [[10, `mx.${domain}`]] }, [`mx.${domain}`]: { A: [host] } });
  const port = await findFreePort([host]);
  const smtp = await startSmtpServer({ host, port, users });
  return {
    env: { ...dns.canaryEnv, VERIFY_SMTP_PORT: String(port), VERIFY_ALLOW_PRIVATE_MX: 'true' },
    dns,
    smtp,
    close: async () => void (await Promise.all([dns.close(), smtp.close()])),
  };
}
