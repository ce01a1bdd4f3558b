/**
 * Where a person goes next once a gateway listens: the web console's address, printed the same
 * way by `npm start` (embedded) and `npm run start:gateway` (distributed).
 */

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

/** The terminal line naming the console; `signInHint` when a key was just printed above it (never put in the URL). */
export function consoleLine(listening: string, signInHint = false): string {
  return `Web console: ${consoleUrl(listening)}${signInHint ? ' (sign in with the key above)' : ''}\n\n`;
}
