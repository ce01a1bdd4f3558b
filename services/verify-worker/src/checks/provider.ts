/**
 * `checks.provider`: the mailbox provider or mail gateway behind a domain's MX hosts, from the
 * table in `provider-table.ts`. The most preferred host the table knows decides (a domain whose
 * primary is a gateway and whose backup is the mailbox provider is the gateway's to answer);
 * `null` when no host is known or when no MX was learnt (an implicit MX is the domain itself).
 */
import { PROVIDER_TABLE } from './provider-table.ts';

const bySuffix = new Map(PROVIDER_TABLE.flatMap((row) => row.suffixes.map((suffix) => [suffix, row.provider] as const)));

/** The provider of one host name: its longest known suffix, compared label by label. */
export function providerOfHost(host: string): string | null {
  const labels = host.toLowerCase().replace(/\.$/, '').split('.');
  for (let start = 0; start < labels.length - 1; start++) {
    const found = bySuffix.get(labels.slice(start).join('.'));
    if (found !== undefined) return found;
  }
  return null;
}

/** `mxHosts`: the MX host names by preference. */
export function providerOf(mxHosts: readonly string[] | null): string | null {
  for (const host of mxHosts ?? []) {
    const found = providerOfHost(host);
    if (found !== null) return found;
  }
  return null;
}
