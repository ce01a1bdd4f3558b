import net from 'node:net';

/**
 * Defence in depth against SMTP command injection. The caller validates addresses too; this module
 * refuses anything that could end a command line or a path, whatever the caller let through.
 */

// Controls (C0, DEL, C1), space and angle brackets: none belongs inside `<...>` of a command we write.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const FORBIDDEN = /[\u0000-\u0020\u007f-\u009f<>]/;
// eslint-disable-next-line no-control-regex -- the ASCII range is the point
const NON_ASCII = /[^\u0000-\u007f]/;
/** RFC 5321 §4.5.3.1.4: a command line is at most 512 octets; `RCPT TO:<>` + CRLF take 12. */
const MAX_PATH_OCTETS = 500;

export class UnsafeSmtpInputError extends Error {}

/**
 * Only a server offering SMTPUTF8 (RFC 6531) may be sent this address. Parsed addresses carry
 * their domain in A-labels (checks/syntax.ts), so only a non-ASCII local part makes it so.
 */
export function needsSmtpUtf8(address: string): boolean {
  return NON_ASCII.test(address);
}

function describe(what: string, value: string): string {
  return `${what} ${JSON.stringify(value.slice(0, 64))}`;
}

export function assertSafeRecipient(address: string): void {
  const at = typeof address === 'string' ? address.lastIndexOf('@') : -1;
  if (at < 1 || at === address.length - 1 || FORBIDDEN.test(address) || Buffer.byteLength(address) > MAX_PATH_OCTETS) {
    throw new UnsafeSmtpInputError(`refusing unsafe recipient: ${describe('recipient', String(address))}`);
  }
}

/** The sender is ours (configuration): ASCII only, `''` for the null sender. */
export function assertSafeSender(address: string): void {
  if (
    typeof address !== 'string' ||
    FORBIDDEN.test(address) ||
    NON_ASCII.test(address) ||
    address.length > MAX_PATH_OCTETS ||
    (address !== '' && !address.includes('@'))
  ) {
    throw new UnsafeSmtpInputError(`refusing unsafe sender: ${describe('sender', String(address))}`);
  }
}

export function assertSafeHeloName(name: string): void {
  if (typeof name !== 'string' || name === '' || FORBIDDEN.test(name) || NON_ASCII.test(name) || name.length > 255) {
    throw new UnsafeSmtpInputError(`refusing unsafe HELO name: ${describe('name', String(name))}`);
  }
}

/** The caller resolved and vetted the address; a host name here would be resolved again, unvetted. */
export function assertIpAddress(host: string): void {
  if (net.isIP(host) === 0)
    throw new UnsafeSmtpInputError(`refusing to connect to a non-IP host ${JSON.stringify(String(host).slice(0, 64))}`);
}
