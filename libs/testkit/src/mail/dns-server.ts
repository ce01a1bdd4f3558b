/**
 * A scripted authoritative DNS server on 127.0.0.1 (UDP) for the mail rig: MX, A, AAAA, null MX,
 * NXDOMAIN for unknown names, SERVFAIL or silence on demand, a delay added to every answer, and a
 * log of the queries received.
 */
import { createSocket } from 'node:dgram';
import dnsPacket from 'dns-packet';

export interface ZoneEntry {
  MX?: Array<[number, string]> | 'null';
  A?: string[];
  AAAA?: string[];
  behaviour?: 'servfail' | 'timeout';
}
export type Zone = Record<string, ZoneEntry>;

export interface RigDnsServer {
  /** `127.0.0.1:port`, for VERIFY_DNS_SERVERS. */
  address: string;
  queries: Array<{ name: string; type: string }>;
  close(): Promise<void>;
}

const TTL = 300;
const RCODE = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3 } as const;

export async function startDnsServer(zone: Zone, options: { delayMs?: number } = {}): Promise<RigDnsServer> {
  const socket = createSocket('udp4');
  const queries: RigDnsServer['queries'] = [];
  const lookup = (name: string) => zone[name.toLowerCase()];

  socket.on('message', (message, remote) => {
    const query = dnsPacket.decode(message);
    const question = query.questions?.[0];
    if (question === undefined) return;
    queries.push({ name: question.name.toLowerCase(), type: question.type });
    const entry = lookup(question.name);
    if (entry?.behaviour === 'timeout') return;
    const answers: dnsPacket.Answer[] = [];
    let rcode: 'NOERROR' | 'NXDOMAIN' | 'SERVFAIL' = 'NOERROR';
    if (entry === undefined) rcode = 'NXDOMAIN';
    else if (entry.behaviour === 'servfail') rcode = 'SERVFAIL';
    else if (question.type === 'MX' && entry.MX !== undefined) {
      const records = entry.MX === 'null' ? ([[0, '.']] as Array<[number, string]>) : entry.MX;
      for (const [preference, exchange] of records)
        answers.push({ type: 'MX', name: question.name, ttl: TTL, data: { preference, exchange: exchange === '.' ? '' : exchange } });
    } else if (question.type === 'A') for (const data of entry.A ?? []) answers.push({ type: 'A', name: question.name, ttl: TTL, data });
    else if (question.type === 'AAAA')
      for (const data of entry.AAAA ?? []) answers.push({ type: 'AAAA', name: question.name, ttl: TTL, data });
    const response = dnsPacket.encode({
      id: query.id,
      type: 'response',
      // dns-packet encodes the rcode only from the low flag bits.
      flags: dnsPacket.AUTHORITATIVE_ANSWER | ((query.flags ?? 0) & dnsPacket.RECURSION_DESIRED) | RCODE[rcode],
      questions: query.questions,
      answers,
    });
    setTimeout(() => socket.send(response, remote.port, remote.address), options.delayMs ?? 0);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${socket.address().port}`,
    queries,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
