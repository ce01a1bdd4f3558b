/**
 * Files as people export them from a CRM or an address book, and what the rig's mail servers make
 * of each address; and the PNG the QR studio draws, read by the same decoder as every other code.
 */
import { scanSvg } from '@svc/testkit';

export interface ExportRow {
  cells: string[];
  verdict: 'deliverable' | 'risky' | 'undeliverable';
}

/** Cells that would run as script or markup if the console inserted them as HTML. */
export const HOSTILE = ['<img src=x onerror="alert(1)">', '<script>alert("cell")</script>', '"><b>bold</b>'] as const;

const quote = (cell: string) => (/[,"\n]/.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell);

/**
 * A CRM export: BOM, CRLF, the address in a column headed `Work Email` (the fourth), quoted cells
 * with commas and line breaks, duplicates, hostile cells. `known` addresses of shop.test are
 * deliverable, others of shop.test undeliverable, those of catch.test (a catch-all) risky.
 */
export function crmExport(distinct: number): { text: string; header: string[]; rows: ExportRow[] } {
  const header = ['First Name', 'Last Name', 'Company', 'Work Email', 'Phone', 'Notes'];
  const rows: ExportRow[] = [];
  for (let i = 0; i < distinct; i += 1) {
    const kind = i % 5 === 4 ? 'risky' : i % 3 === 2 ? 'undeliverable' : 'deliverable';
    const address = kind === 'risky' ? `someone${i}@catch.test` : kind === 'undeliverable' ? `gone${i}@shop.test` : `known${i}@shop.test`;
    const notes = HOSTILE[i % 7] ?? (i % 11 === 0 ? 'met at the fair,\nfollow up' : `note ${i}`);
    rows.push({
      cells: [`Person${i}`, `Family, ${i}`, 'ACME Corp', address, `+1 555 01${String(i).padStart(2, '0')}`, notes],
      verdict: kind,
    });
  }
  // known0 again, the domain in capitals: one distinct address, probed and billed once.
  rows.push({ cells: ['Person0', 'Again', 'ACME Corp', 'known0@SHOP.TEST', '', 'twice'], verdict: 'deliverable' });
  const text = `\ufeff${[header, ...rows.map((row) => row.cells)].map((cells) => cells.map(quote).join(',')).join('\r\n')}\r\n`;
  return { text, header, rows };
}

/** The known mailboxes of shop.test in crmExport(distinct). */
export const knownUsers = (distinct: number): string[] => Array.from({ length: distinct }, (_, i) => `known${i}@shop.test`);

/** A PNG read by the tests' decoder (resvg draws it inside an SVG, jsQR reads the pixels). */
export function scanPng(png: Buffer): string | undefined {
  const width = png.readUInt32BE(16);
  const height = png.readUInt32BE(20);
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">` +
    `<image width="${width}" height="${height}" href="data:image/png;base64,${png.toString('base64')}"/></svg>`;
  return scanSvg(svg);
}
