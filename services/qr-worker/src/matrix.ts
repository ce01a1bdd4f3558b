/** The JSON form: `size` rows of `size` numbers, 1 = dark, quiet zone excluded (docs/api.md, "SVG and JSON"). */
import type { ModuleMatrix } from './encoder/index.ts';

export interface MatrixBody {
  version: number;
  ecc: 'M';
  size: number;
  margin: number;
  modules: number[][];
}

export function matrixBody(matrix: ModuleMatrix, margin: number): MatrixBody {
  const rows: number[][] = [];
  for (let y = 0; y < matrix.size; y += 1) rows.push(Array.from(matrix.modules.subarray(y * matrix.size, (y + 1) * matrix.size)));
  return { version: matrix.version, ecc: 'M', size: matrix.size, margin, modules: rows };
}
