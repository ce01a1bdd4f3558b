/**
 * `npm run bench:xlsx`: reads a 100,000-row workbook (a contact export of eight columns, every
 * address distinct) as the gateway reads an upload, and prints its size on the wire, what its
 * parts inflate to, the time taken and the heap's growth (node --expose-gc for a steady figure).
 */
import { Readable } from 'node:stream';
import { readXlsxUpload } from '@svc/lists/service';
import { xlsx } from '../test/lists/xlsx-file.ts';

const ROWS = Number(process.env.XLSX_BENCH_ROWS ?? 100_000);
const header = ['First Name', 'Last Name', 'Company', 'Title', 'Email', 'Phone', 'City', 'Country'];
const rows = Array.from({ length: ROWS }, (_, i) => [
  `Name${i % 5000}`,
  `Surname${i % 7919}`,
  `Company ${i % 2500} ApS`,
  ['CEO', 'Engineer', 'Sales', 'Marketing'][i % 4]!,
  `person.${i}@example${i % 300}.test`,
  i * 7,
  ['København', 'Zürich', 'Paris', 'Berlin'][i % 4]!,
  'Denmark',
]);
const book = xlsx([[header, ...rows]]);
const gc = (globalThis as { gc?: () => void }).gc;
gc?.();
const heapBefore = process.memoryUsage().heapUsed;
let peak = heapBefore;
const started = performance.now();
const upload = await readXlsxUpload(Readable.from([book]), {});
let count = 0;
for await (const row of upload.rows) {
  if (row[upload.layout.addressColumn] !== '') count += 1;
  if (count % 10_000 === 0) peak = Math.max(peak, process.memoryUsage().heapUsed);
}
const ms = performance.now() - started;
console.log(
  JSON.stringify({
    rows: count,
    wireMiB: +(book.length / 2 ** 20).toFixed(1),
    seconds: +(ms / 1000).toFixed(2),
    heapGrowthMiB: +((peak - heapBefore) / 2 ** 20).toFixed(1),
  }),
);
