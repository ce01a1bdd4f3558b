/**
 * Mailbox providers and mail gateways by the names of their MX hosts: data, read by
 * `provider.ts`. A host matches a suffix when it is that name or ends with `.` and that name.
 * Suffixes are those the providers publish for their customers' domains (and their own), as MX
 * answers show them; a provider with several brands (Yahoo and AOL, GMX and web.de) is one row.
 * Add a row when a provider is seen often enough to matter; among the rows,
 * the longest suffix that matches a host decides, so a more specific one may name another provider.
 */
export interface ProviderRow {
  provider: string;
  suffixes: readonly string[];
}

export const PROVIDER_TABLE: readonly ProviderRow[] = [
  { provider: 'google', suffixes: ['google.com', 'googlemail.com', 'aspmx.l.google.com', 'smtp.google.com'] },
  { provider: 'microsoft', suffixes: ['protection.outlook.com', 'outlook.com', 'hotmail.com', 'olc.protection.outlook.com'] },
  { provider: 'yahoo', suffixes: ['yahoodns.net', 'yahoo.com', 'aol.com', 'aol.net'] },
  { provider: 'apple', suffixes: ['icloud.com', 'me.com', 'mac.com'] },
  { provider: 'zoho', suffixes: ['zoho.com', 'zoho.eu', 'zoho.in', 'zoho.com.au', 'zoho.jp', 'zohomail.com'] },
  { provider: 'proton', suffixes: ['protonmail.ch', 'proton.ch', 'protonmail.com'] },
  { provider: 'yandex', suffixes: ['yandex.net', 'yandex.ru'] },
  { provider: 'mailru', suffixes: ['mail.ru'] },
  { provider: 'gmx', suffixes: ['gmx.net', 'gmx.com', 'gmx.de', 'web.de'] },
  { provider: 'fastmail', suffixes: ['messagingengine.com', 'fastmail.com'] },
  { provider: 'proofpoint', suffixes: ['pphosted.com', 'ppe-hosted.com', 'ppops.net', 'proofpoint.com'] },
  { provider: 'mimecast', suffixes: ['mimecast.com', 'mimecast.co.za', 'mimecast-offshore.com'] },
  { provider: 'barracuda', suffixes: ['barracudanetworks.com', 'cudamail.com', 'barracuda.com'] },
  { provider: 'cisco', suffixes: ['iphmx.com'] },
  { provider: 'broadcom', suffixes: ['messagelabs.com'] },
  { provider: 'trendmicro', suffixes: ['tmes.trendmicro.com', 'tmes.trendmicro.eu', 'tmes-anz.trendmicro.com'] },
  { provider: 'sophos', suffixes: ['hydra.sophos.com'] },
  { provider: 'forcepoint', suffixes: ['mailcontrol.com'] },
  { provider: 'hornetsecurity', suffixes: ['hornetsecurity.com'] },
  { provider: 'ionos', suffixes: ['kundenserver.de', 'ionos.com', 'ionos.de', 'ionos.co.uk', 'perfora.net'] },
  { provider: 'ovh', suffixes: ['mail.ovh.net', 'ovh.net'] },
  { provider: 'godaddy', suffixes: ['secureserver.net'] },
  { provider: 'rackspace', suffixes: ['emailsrvr.com'] },
  { provider: 'amazon', suffixes: ['amazonaws.com', 'awsapps.com'] },
  { provider: 'namecheap', suffixes: ['privateemail.com', 'registrar-servers.com'] },
  { provider: 'tutanota', suffixes: ['tutanota.de'] },
  { provider: 'qq', suffixes: ['qq.com'] },
  { provider: 'netease', suffixes: ['netease.com', '163.com', '126.com'] },
  { provider: 'naver', suffixes: ['naver.com'] },
  { provider: 'seznam', suffixes: ['seznam.cz'] },
  { provider: 'orange', suffixes: ['orange.fr'] },
  { provider: 'telekom', suffixes: ['t-online.de'] },
  { provider: 'comcast', suffixes: ['comcast.net'] },
  { provider: 'migadu', suffixes: ['migadu.com'] },
];
