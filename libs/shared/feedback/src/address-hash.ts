/**
 * What feedback and history are stored under: a keyed hash (HMAC-SHA256 with the deployment's
 * HISTORY_HASH_SECRET) of the normalised address, never the address. A plain SHA-256 would let
 * anyone holding a copy of the store test guesses ("is ceo@acme.com in here?"); without the
 * secret the keyed hash tells nothing. 16 bytes (128 bits) of the digest, base64url: 22
 * characters, collision-free for any realistic store.
 */
import { createHmac, randomBytes } from 'node:crypto';

export type AddressHasher = (normalised: string) => string;

export function addressHasher(secret: string): AddressHasher {
  if (secret.length < 16) throw new Error('HISTORY_HASH_SECRET must be at least 16 characters');
  return (normalised) => createHmac('sha256', secret).update(normalised, 'utf8').digest().subarray(0, 16).toString('base64url');
}

/** The domain's hash, in its own namespace so that it never equals an address's. */
export const domainKey = (hash: AddressHasher, domain: string): string => hash(`@domain:${domain}`);

export const generateHashSecret = (): string => randomBytes(32).toString('base64url');
