/**
 * A scripted DNS server on 127.0.0.1 for the mail rig, answering as a recursive resolver would:
 * MX, A, AAAA, CNAME chains followed in the answer, null MX, NXDOMAIN for unknown names,
 * SERVFAIL or silence on demand, a delay added to every answer, and a log of the queries.
 * Negative answers carry the SOA of the closest enclosing name that has one (RFC 2308), TTLs are
 * per entry, and the zone is read at each query, so a test may add a record while the product
 * runs. `behave('nxdomain')` makes it lie (NXDOMAIN for every name, as a broken or rewriting
 * resolver does), `behave('silent')` makes it answer nothing, `behave('normal')` recovers.
 *
 * The rig's canaries: every rig DNS server also answers `canary.rig.test` (an MX set), and keeps
 * a TCP port open that stands for the canary mail servers' port 25; `canaryEnv` points a
 * verifier's VERIFY_DNS_CANARIES and VERIFY_SMTP_CANARIES at them, so that the rig's verifier
 * trusts its resolver and egress as a production one trusts gmail.com's.
 * UDP and TCP on one port: a UDP answer larger than the client's buffer (512 bytes, or what its
 * EDNS OPT record announces), or any answer for an entry marked `truncate`, is sent with the TC
 * bit and no records, so the client must ask again over TCP (RFC 7766).
 */
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import net from 'node:net';
import dnsPacket from 'dns-packet';

export interface ZoneEntry {
  /** `'null'` is the null MX (`MX 0 .`); a `.` exchange among others mixes it into a set. */
  MX?: Array<[number, string]> | 'null';
  A?: string[];
  AAAA?: string[];
  /** This name is an alias: every query for it is answered with the CNAME and then the target's records. */
  CNAME?: string;
  behaviour?: 'servfail' | 'timeout';
  /** Over UDP, answer with the TC bit and no records, whatever the size. */
  truncate?: boolean;
  /** TTL of this name's records (default 300). */
  ttl?: number;
  /** This name is a zone apex: negative answers for it and the names under it carry this SOA (`minimum`, and the SOA's own `ttl`, default 3600). */
  SOA?: { minimum: number; ttl?: number };
}
export type Zone = Record<string, ZoneEntry>;

export type RigDnsBehaviour = 'normal' | 'nxdomain' | 'silent';

export interface RigDnsServer {
  /** `127.0.0.1:port`, for VERIFY_DNS_SERVERS. */
  address: string;
  /** VERIFY_DNS_SERVERS and the rig's canaries (VERIFY_DNS_CANARIES, VERIFY_SMTP_CANARIES). */
  canaryEnv: Record<string, string>;
  queries: Array<{ name: string; type: string; transport: 'udp' | 'tcp' }>;
  /** From now on: answer as scripted, lie (NXDOMAIN for every name), or stay silent. */
  behave(behaviour: RigDnsBehaviour): void;
  close(): Promise<void>;
}

/** The rig's DNS canary: a domain with an MX set, answered by every rig DNS server unless its zone says otherwise. */
export const RIG_CANARY_DOMAIN = 'canary.rig.test';
const CANARY_ZONE: Zone = {
  [RIG_CANARY_DOMAIN]: { MX: [[10, `mx.${RIG_CANARY_DOMAIN}`]] },
  [`mx.${RIG_CANARY_DOMAIN}`]: { A: ['127.0.0.1'] },
};

const DEFAULT_TTL = 300;
const SOA_TTL = 3600;
const RCODE = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3 } as const;
const CLASSIC_UDP_LIMIT = 512;
const MAX_CNAME_CHAIN = 8;

type Question = dnsPacket.Question;

/** The SOA record of the closest enclosing name that has one, for the authority section of a negative answer. */
function soaFor(zone: Zone, name: string): dnsPacket.Answer[] {
  const labels = name.split('.');
  for (let start = 0; start < labels.length; start++) {
    const apex = labels.slice(start).join('.');
    const soa = zone[apex]?.SOA;
    if (soa !== undefined)
      return [
        {
          type: 'SOA',
          name: apex,
          ttl: soa.ttl ?? SOA_TTL,
          data: {
            mname: `ns.${apex}`,
            rname: `hostmaster.${apex}`,
            serial: 1,
            refresh: 3600,
            retry: 600,
            expire: 86400,
            minimum: soa.minimum,
          },
        },
      ];
  }
  return [];
}

type Found = { rcode: keyof typeof RCODE; answers: dnsPacket.Answer[]; authorities?: dnsPacket.Answer[] };

function answersFor(zone: Zone, question: Question): Found | 'silent' {
  const found = recordsFor(zone, question);
  if (found === 'silent' || found.rcode === 'SERVFAIL') return found;
  const negative = found.rcode === 'NXDOMAIN' || !found.answers.some((answer) => answer.type === question.type);
  return negative ? { ...found, authorities: soaFor(zone, question.name.toLowerCase()) } : found;
}

function recordsFor(zone: Zone, question: Question): Found | 'silent' {
  const answers: dnsPacket.Answer[] = [];
  let name = question.name.toLowerCase();
  for (let hop = 0; hop <= MAX_CNAME_CHAIN; hop++) {
    const entry = zone[name] ?? CANARY_ZONE[name];
    if (entry === undefined) return { rcode: hop === 0 ? 'NXDOMAIN' : 'NOERROR', answers };
    const TTL = entry.ttl ?? DEFAULT_TTL;
    if (entry.behaviour === 'timeout') return 'silent';
    if (entry.behaviour === 'servfail') return { rcode: 'SERVFAIL', answers: [] };
    if (entry.CNAME !== undefined && question.type !== 'CNAME') {
      answers.push({ type: 'CNAME', name, ttl: TTL, data: entry.CNAME });
      name = entry.CNAME.toLowerCase();
      continue;
    }
    if (question.type === 'MX' && entry.MX !== undefined) {
      const records = entry.MX === 'null' ? ([[0, '.']] as Array<[number, string]>) : entry.MX;
      for (const [preference, exchange] of records)
        answers.push({ type: 'MX', name, ttl: TTL, data: { preference, exchange: exchange === '.' ? '' : exchange } });
    } else if (question.type === 'A') for (const data of entry.A ?? []) answers.push({ type: 'A', name, ttl: TTL, data });
    else if (question.type === 'AAAA') for (const data of entry.AAAA ?? []) answers.push({ type: 'AAAA', name, ttl: TTL, data });
    return { rcode: 'NOERROR', answers };
  }
  return { rcode: 'SERVFAIL', answers: [] };
}

/** The UDP payload size the client announced in an EDNS OPT record, else 512. */
function udpLimit(query: dnsPacket.Packet): number {
  const opt = query.additionals?.find((record) => record.type === 'OPT');
  const size = opt !== undefined && 'udpPayloadSize' in opt ? opt.udpPayloadSize : undefined;
  return typeof size === 'number' && size > CLASSIC_UDP_LIMIT ? size : CLASSIC_UDP_LIMIT;
}

export async function startDnsServer(zone: Zone, options: { delayMs?: number } = {}): Promise<RigDnsServer> {
  const queries: RigDnsServer['queries'] = [];
  let behaviour: RigDnsBehaviour = 'normal';

  /** The response to one query message, or undefined to stay silent. */
  const respond = (message: Buffer, transport: 'udp' | 'tcp'): Buffer | undefined => {
    const query = dnsPacket.decode(message);
    const question = query.questions?.[0];
    if (question === undefined) return undefined;
    queries.push({ name: question.name.toLowerCase(), type: question.type, transport });
    if (behaviour === 'silent') return undefined;
    const found: Found | 'silent' = behaviour === 'nxdomain' ? { rcode: 'NXDOMAIN', answers: [] } : answersFor(zone, question);
    if (found === 'silent') return undefined;
    // dns-packet encodes the rcode only from the low flag bits.
    const flags = dnsPacket.AUTHORITATIVE_ANSWER | ((query.flags ?? 0) & dnsPacket.RECURSION_DESIRED) | RCODE[found.rcode];
    const full = dnsPacket.encode({
      id: query.id,
      type: 'response',
      flags,
      questions: query.questions,
      answers: found.answers,
      authorities: found.authorities ?? [],
    });
    const forceTruncate = zone[question.name.toLowerCase()]?.truncate === true;
    if (transport === 'tcp' || (!forceTruncate && full.length <= udpLimit(query))) return full;
    return dnsPacket.encode({
      id: query.id,
      type: 'response',
      flags: flags | dnsPacket.TRUNCATED_RESPONSE,
      questions: query.questions,
      answers: [],
    });
  };
  // A delayed answer can fall due after close(): the timers are cleared there, so none writes to a closed socket.
  const pending = new Set<NodeJS.Timeout>();
  const later = (send: () => void) => {
    const timer = setTimeout(() => {
      pending.delete(timer);
      send();
    }, options.delayMs ?? 0);
    pending.add(timer);
  };

  const { udp, tcp } = await listenOnOnePort(
    (udpSocket) =>
      udpSocket.on('message', (message, remote) => {
        const response = respond(message, 'udp');
        if (response !== undefined) later(() => udpSocket.send(response, remote.port, remote.address));
      }),
    (connection) => {
      connection.on('error', () => {});
      let buffer = Buffer.alloc(0);
      connection.on('data', (chunk: Buffer) => {
        buffer = Buffer.concat([buffer, chunk]);
        // RFC 1035 §4.2.2: each message is preceded by its two-byte length.
        while (buffer.length >= 2 && buffer.length >= 2 + buffer.readUInt16BE(0)) {
          const message = buffer.subarray(2, 2 + buffer.readUInt16BE(0));
          buffer = buffer.subarray(2 + message.length);
          const response = respond(message, 'tcp');
          if (response === undefined) continue;
          const length = Buffer.alloc(2);
          length.writeUInt16BE(response.length);
          later(() => connection.writable && connection.write(Buffer.concat([length, response])));
        }
      });
    },
  );
  const port = udp.address().port;
  const smtpCanary = await startPortCanary();
  return {
    address: `127.0.0.1:${port}`,
    canaryEnv: {
      VERIFY_DNS_SERVERS: `127.0.0.1:${port}`,
      VERIFY_DNS_CANARIES: RIG_CANARY_DOMAIN,
      VERIFY_SMTP_CANARIES: smtpCanary.address,
    },
    queries,
    behave: (next) => {
      behaviour = next;
    },
    close: async () => {
      pending.forEach((timer) => clearTimeout(timer));
      pending.clear();
      await new Promise<void>((resolve) => udp.close(() => resolve()));
      tcp.closeAllConnections?.();
      await new Promise<void>((resolve) => tcp.close(() => resolve()));
      await smtpCanary.close();
    },
  };
}

/**
 * A TCP port that accepts connections and closes them: what the egress canary needs of a mail
 * server (a TCP connection accepted on its SMTP port), without counting in any rig mail server.
 */
export async function startPortCanary(host = '127.0.0.1'): Promise<{ address: string; close(): Promise<void> }> {
  const connections = new Set<net.Socket>();
  const server = net.createServer((connection) => {
    connection.on('error', () => {});
    connections.add(connection);
    connection.on('close', () => connections.delete(connection));
    connection.end();
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    address: `${host}:${port}`,
    close: async () => {
      connections.forEach((connection) => connection.destroy());
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A UDP socket and a TCP server on the same free port of 127.0.0.1. */
async function listenOnOnePort(
  onUdp: (socket: UdpSocket) => void,
  onTcp: (connection: net.Socket) => void,
): Promise<{ udp: UdpSocket; tcp: net.Server & { closeAllConnections?: () => void } }> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const udp = createSocket('udp4');
    await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve));
    const connections = new Set<net.Socket>();
    const tcp = Object.assign(
      net.createServer((connection) => {
        connections.add(connection);
        connection.on('close', () => connections.delete(connection));
        onTcp(connection);
      }),
      { closeAllConnections: () => connections.forEach((connection) => connection.destroy()) },
    );
    const listening = await new Promise<boolean>((resolve) => {
      tcp.once('error', () => resolve(false));
      tcp.listen(udp.address().port, '127.0.0.1', () => resolve(true));
    });
    if (listening) {
      onUdp(udp);
      return { udp, tcp };
    }
    await new Promise<void>((resolve) => udp.close(() => resolve()));
  }
  throw new Error('no port free for both UDP and TCP');
}
