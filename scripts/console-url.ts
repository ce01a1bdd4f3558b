/**
 * The web console's address as a person opens it, from the address the gateway listens on:
 * a wildcard host (`0.0.0.0`, `::`) is reached at `localhost`; an IPv6 host stays bracketed.
 */
export function consoleUrl(listening: string): string {
  const url = new URL(listening);
  if (url.hostname === '0.0.0.0' || url.hostname === '[::]') url.hostname = 'localhost';
  url.pathname = '/app';
  return url.toString();
}
