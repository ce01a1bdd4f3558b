/** The BCH-protected format word (level and mask) and, from version 7, the version word. */
const LEVEL_M_INDICATOR = 0b00;
const FORMAT_GENERATOR = 0b101_0011_0111;
const FORMAT_XOR_MASK = 0b101_0100_0001_0010;
const VERSION_GENERATOR = 0b1_1111_0010_0101;

function bchRemainder(data: number, dataBits: number, generator: number, checkBits: number): number {
  let remainder = data << checkBits;
  for (let bit = dataBits + checkBits - 1; bit >= checkBits; bit -= 1) {
    if (((remainder >>> bit) & 1) === 1) remainder ^= generator << (bit - checkBits);
  }
  return remainder;
}

/** 15 bits: level M and the mask, with 10 check bits, XORed with the standard's fixed mask. */
export function formatBits(mask: number): number {
  const data = (LEVEL_M_INDICATOR << 3) | mask;
  return ((data << 10) | bchRemainder(data, 5, FORMAT_GENERATOR, 10)) ^ FORMAT_XOR_MASK;
}

/** 18 bits: the version with 12 check bits (versions 7 and above carry it). */
export function versionBits(version: number): number {
  return (version << 12) | bchRemainder(version, 6, VERSION_GENERATOR, 12);
}
