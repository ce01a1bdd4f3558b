/**
 * List ids that live in their key's Redis Cluster slot. A list's state changes (create, commit,
 * end, cancel) move the list's own keys and its key's active-list set in one script or
 * transaction, so both must hash to one slot; a list id is the tag of its keys (`{lst_...}`), the
 * key id the tag of the key's sets (`{<keyId>}`). Rather than carry the key id in every list
 * call, the id is drawn so that CRC16(id) falls in the key id's slot: 4 of its 96 random bits
 * are spent on that, and a key's lists spread over the cluster with the keys.
 */
import { randomBytes } from 'node:crypto';

const SLOTS = 16_384;

const TABLE = Uint16Array.from({ length: 256 }, (_, byte) => {
  let crc = byte << 8;
  for (let bit = 0; bit < 8; bit += 1) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  return crc;
});
const HEX = Uint8Array.from('0123456789abcdef', (char) => char.charCodeAt(0));

/** CRC16-XMODEM, Redis Cluster's key hash (cluster spec, "Keys distribution model"). */
function crc16(bytes: Uint8Array, seed = 0): number {
  let crc = seed;
  for (const byte of bytes) crc = ((crc << 8) & 0xffff) ^ TABLE[((crc >> 8) ^ byte) & 0xff]!;
  return crc;
}

/** The slot of a hash tag's content (what Redis hashes for a key `...{tag}...`). */
export const slotOfTag = (tag: string): number => crc16(Buffer.from(tag, 'utf8')) % SLOTS;

/** `lst_` and 24 hex digits, in the slot of `keyId`. */
export function newListIdFor(keyId: string): string {
  const target = slotOfTag(keyId);
  for (;;) {
    // 20 random hex digits hashed once, then every value of the last 4 tried: about 4 of the
    // 65,536 land in the target slot, so one draw almost always suffices.
    const head = `lst_${randomBytes(10).toString('hex')}`;
    const seed = crc16(Buffer.from(head, 'ascii'));
    const start = randomBytes(2).readUInt16BE(0);
    const tail = new Uint8Array(4);
    for (let step = 0; step < 0x10000; step += 1) {
      const value = (start + step) & 0xffff;
      for (let digit = 0; digit < 4; digit += 1) tail[digit] = HEX[(value >> (12 - 4 * digit)) & 0xf]!;
      if (crc16(tail, seed) % SLOTS === target) return head + Buffer.from(tail).toString('ascii');
    }
  }
}
