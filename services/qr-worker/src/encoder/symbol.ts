/**
 * The encoder's result. Its canonical form is the packed rows the mask was chosen on; the SVG
 * renderer reads runs straight from them, so the module-per-byte matrix that the JSON and PNG
 * forms read is unpacked only when first asked for (an SVG render never pays for it).
 */

/** What the renderers draw. */
export interface ModuleMatrix {
  readonly version: number;
  readonly size: number;
  /** Two 32-bit words per row: module (y, x) is bit x % 32 of word 2y + (x >= 32 ? 1 : 0), 1 = dark. */
  readonly rows: Int32Array;
  /** Row-major, `size * size` entries, 1 = dark. */
  readonly modules: Uint8Array;
}

export interface QrSymbol extends ModuleMatrix {
  readonly mask: number;
}

/** `rows` (owned by the symbol from here on) as one byte per module. */
export function unpackRows(rows: Int32Array, size: number): Uint8Array {
  const modules = new Uint8Array(size * size);
  // A row's two words unpacked one after the other: no word index per module.
  const low = Math.min(size, 32);
  for (let row = 0, at = 0; row < size; row += 1) {
    const lo = rows[2 * row]!;
    const hi = rows[2 * row + 1]!;
    for (let column = 0; column < low; column += 1) modules[at++] = (lo >>> column) & 1;
    for (let column = 32; column < size; column += 1) modules[at++] = (hi >>> (column - 32)) & 1;
  }
  return modules;
}

export class EncodedSymbol implements QrSymbol {
  #modules: Uint8Array | undefined;

  constructor(
    readonly version: number,
    readonly size: number,
    readonly mask: number,
    readonly rows: Int32Array,
  ) {}

  get modules(): Uint8Array {
    this.#modules ??= unpackRows(this.rows, this.size);
    return this.#modules;
  }
}
