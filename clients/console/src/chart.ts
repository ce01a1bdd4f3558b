/**
 * The verdict summary as plain SVG: one stacked bar, one segment per verdict. Three numbers need
 * no charting library (each weighs more than the whole console); SVG scales with the layout, takes
 * its colours from the style sheet, and carries its meaning in its accessible name.
 */
import { svg } from './dom.ts';

export const VERDICTS = ['deliverable', 'risky', 'undeliverable'] as const;
export type Verdict = (typeof VERDICTS)[number];

export function verdictChart(summary: Record<Verdict, number>): SVGSVGElement {
  const total = VERDICTS.reduce((sum, verdict) => sum + summary[verdict], 0);
  const label = `Verdicts: ${VERDICTS.map((verdict) => `${summary[verdict]} ${verdict}`).join(', ')}`;
  const chart = svg('svg', { role: 'img', 'aria-label': label, viewBox: '0 0 100 10', preserveAspectRatio: 'none', class: 'chart' });
  let x = 0;
  for (const verdict of VERDICTS) {
    const width = total === 0 ? 0 : (summary[verdict] / total) * 100;
    if (width > 0)
      chart.append(
        svg('rect', { x, y: 0, width, height: 10, class: `seg ${verdict}` }, svg('title', {}, `${summary[verdict]} ${verdict}`)),
      );
    x += width;
  }
  if (total === 0) chart.append(svg('rect', { x: 0, y: 0, width: 100, height: 10, class: 'seg empty' }));
  return chart;
}
