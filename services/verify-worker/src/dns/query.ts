/**
 * One DNS question asked of the configured resolvers, answered with what the caching rules need
 * and node's c-ares binding does not report: every record's TTL and the authority section, whose
 * SOA bounds how long a negative answer may be kept (RFC 2308 §5). UDP first, with an EDNS
 * buffer of 1232 octets; a truncated answer is asked again over TCP (RFC 7766). Each server is
 * tried in turn, twice (half the time given, then all of it, as c-ares does); a server that
 * refuses (ICMP port unreachable) gives way to the next at once.
 */
import { createSocket } from 'node:dgram';
import { getServers } from 'node:dns';
import net from 'node:net';
import dnsPacket from 'dns-packet';

export interface DnsServer {
  host: string;
  port: number;
}

export interface DnsRecord {
  type: string;
  name: string;
  ttl: number;
  data: unknown;
}

export interface DnsResponse {
  /** RFC 1035 §4.1.1: 0 NOERROR, 2 SERVFAIL, 3 NXDOMAIN, 5 REFUSED... */
  rcode: number;
  answers: DnsRecord[];
  authorities: DnsRecord[];
}

export type DnsFailureKind = 'timeout' | 'refused' | 'error';

export class DnsQueryError extends Error {
  constructor(
    readonly kind: DnsFailureKind,
    message: string,
  ) {
    super(message);
  }
}

export const RCODE = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3 } as const;
const EDNS_UDP_SIZE = 1232;

/** `host:port`, `host`, `[v6]:port` or a bare IPv6 address, as VERIFY_DNS_SERVERS and `dns.getServers()` write them. */
export function parseDnsServer(value: string): DnsServer {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(value);
  if (bracketed !== null) return { host: bracketed[1] ?? '', port: Number(bracketed[2] ?? 53) };
  if (net.isIPv6(value)) return { host: value, port: 53 };
  const [host = '', port] = value.split(':');
  return { host, port: port === undefined ? 53 : Number(port) };
}

/** The configured resolvers, else the system's (read by c-ares from /etc/resolv.conf). */
export function dnsServers(configured: readonly string[] | undefined): DnsServer[] {
  const servers = configured !== undefined && configured.length > 0 ? configured : getServers();
  return servers.map(parseDnsServer);
}

const records = (list: dnsPacket.Answer[] | undefined): DnsRecord[] =>
  (list ?? []).map((record) => ({
    type: record.type,
    name: record.name,
    ttl: 'ttl' in record ? (record.ttl ?? 0) : 0,
    data: 'data' in record ? record.data : undefined,
  }));

function packet(name: string, type: 'MX' | 'A' | 'AAAA', id: number, edns: boolean): dnsPacket.Packet {
  const opt: dnsPacket.OptAnswer = {
    type: 'OPT',
    name: '.',
    udpPayloadSize: EDNS_UDP_SIZE,
    extendedRcode: 0,
    ednsVersion: 0,
    flags: 0,
    flag_do: false,
    options: [],
  };
  return { type: 'query', id, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type, name }], ...(edns ? { additionals: [opt] } : {}) };
}

function decoded(packet: dnsPacket.DecodedPacket): DnsResponse {
  return { rcode: (packet.flags ?? 0) & 0xf, answers: records(packet.answers), authorities: records(packet.authorities) };
}

function overUdp(server: DnsServer, name: string, type: 'MX' | 'A' | 'AAAA', timeoutMs: number): Promise<DnsResponse | 'truncated'> {
  return new Promise((resolve, reject) => {
    const id = Math.floor(Math.random() * 65_536);
    const socket = createSocket(net.isIPv6(server.host) ? 'udp6' : 'udp4');
    const finish = (outcome: DnsResponse | 'truncated' | DnsQueryError) => {
      clearTimeout(timer);
      socket.close();
      if (outcome instanceof DnsQueryError) reject(outcome);
      else resolve(outcome);
    };
    const timer = setTimeout(() => finish(new DnsQueryError('timeout', `no answer within ${timeoutMs} ms`)), timeoutMs);
    socket.on('error', (error: NodeJS.ErrnoException) =>
      finish(new DnsQueryError(error.code === 'ECONNREFUSED' ? 'refused' : 'error', error.code ?? error.message)),
    );
    socket.on('message', (raw) => {
      let packet: dnsPacket.DecodedPacket;
      try {
        packet = dnsPacket.decode(raw);
      } catch {
        return; // not an answer: keep waiting for one
      }
      if (packet.id !== id || packet.type !== 'response') return;
      finish(packet.flag_tc ? 'truncated' : decoded(packet));
    });
    // A connected socket hears ICMP port unreachable as ECONNREFUSED, and only its server's answers.
    socket.connect(server.port, server.host, () => socket.send(dnsPacket.encode(packet(name, type, id, true))));
  });
}

function overTcp(server: DnsServer, name: string, type: 'MX' | 'A' | 'AAAA', timeoutMs: number): Promise<DnsResponse> {
  return new Promise((resolve, reject) => {
    const id = Math.floor(Math.random() * 65_536);
    const socket = net.connect({ host: server.host, port: server.port });
    let buffer = Buffer.alloc(0);
    const finish = (outcome: DnsResponse | DnsQueryError) => {
      clearTimeout(timer);
      socket.destroy();
      if (outcome instanceof DnsQueryError) reject(outcome);
      else resolve(outcome);
    };
    const timer = setTimeout(() => finish(new DnsQueryError('timeout', `no answer within ${timeoutMs} ms`)), timeoutMs);
    socket.on('error', (error: NodeJS.ErrnoException) =>
      finish(new DnsQueryError(error.code === 'ECONNREFUSED' ? 'refused' : 'error', error.code ?? error.message)),
    );
    socket.on('connect', () => socket.write(dnsPacket.streamEncode(packet(name, type, id, false))));
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      // RFC 1035 §4.2.2: each message is preceded by its two-byte length.
      if (buffer.length < 2 || buffer.length < 2 + buffer.readUInt16BE(0)) return;
      try {
        finish(decoded(dnsPacket.decode(buffer.subarray(2, 2 + buffer.readUInt16BE(0)))));
      } catch {
        finish(new DnsQueryError('error', 'malformed answer'));
      }
    });
  });
}

/** One question, answered by the first server that answers; the last failure when none does. */
export async function queryDns(
  servers: readonly DnsServer[],
  name: string,
  type: 'MX' | 'A' | 'AAAA',
  timeoutMs: number,
): Promise<DnsResponse> {
  // As c-ares did before: half the time for the first try, twice that for the second, so a
  // resolver slowed by load gets a second, longer chance.
  const firstTry = Math.max(1, Math.floor(timeoutMs / 2));
  let last = new DnsQueryError('error', 'no DNS server');
  for (let attempt = 0; attempt < 2; attempt++) {
    const perTry = firstTry * (attempt + 1);
    for (const server of servers) {
      try {
        const answer = await overUdp(server, name, type, perTry);
        return answer === 'truncated' ? await overTcp(server, name, type, perTry) : answer;
      } catch (error) {
        last = error instanceof DnsQueryError ? error : new DnsQueryError('error', String(error));
      }
    }
    // A server that refuses the port will refuse it again: no second round.
    if (last.kind === 'refused') break;
  }
  throw last;
}
