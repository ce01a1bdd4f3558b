/**
 * A list's catch-all addresses: the spread of their `probability` (the chance each receives mail,
 * learnt from the deliveries and bounces the key reported at its domain; docs/feedback.md) as a
 * histogram of tenths, and a download of those at or above a chosen probability, cut from the
 * full-form results file like the per-verdict downloads (same columns, byte-order mark kept).
 */
import { h, svg } from './dom.ts';
import { BINS, catchAllAtOrAbove, countAtOrAbove, spread } from './results.ts';

const DEFAULT_THRESHOLD = 0.5;
const tenth = (i: number) => (i / BINS).toFixed(1);

function histogram(probabilities: readonly number[]): SVGSVGElement {
  const bins = spread(probabilities);
  const highest = Math.max(1, ...bins);
  const described = bins.flatMap((count, i) => (count === 0 ? [] : [`${count} from ${tenth(i)} to ${tenth(i + 1)}`]));
  const chart = svg('svg', {
    role: 'img',
    'aria-label': `Probability spread of ${probabilities.length} catch-all addresses: ${described.join(', ')}`,
    viewBox: `0 0 ${BINS * 10} 40`,
    preserveAspectRatio: 'none',
    class: 'spread',
  });
  bins.forEach((count, i) => {
    const height = (count / highest) * 38;
    chart.append(
      svg(
        'rect',
        { x: i * 10 + 1, y: 40 - height, width: 8, height, class: 'bin' },
        svg('title', {}, `${count} from ${tenth(i)} to ${tenth(i + 1)}`),
      ),
    );
  });
  chart.append(svg('line', { x1: 0, y1: 39.75, x2: BINS * 10, y2: 39.75, class: 'axis' }));
  return chart;
}

/** The section, or null when the list has no catch-all address (nothing to spread). */
export function catchAllSection(csv: string, probabilities: readonly number[], fileBase: string, signal: AbortSignal): HTMLElement | null {
  if (probabilities.length === 0) return null;
  const input = h('input', {
    type: 'number',
    id: 'min-probability',
    min: 0,
    max: 1,
    step: 0.05,
    value: DEFAULT_THRESHOLD.toFixed(2),
    'aria-describedby': 'min-probability-hint',
  });
  const counted = h('p', { 'aria-live': 'polite' });
  const link = h('a', {}, 'Download catch-all addresses');
  let url: string | undefined;
  const release = () => {
    if (url !== undefined) URL.revokeObjectURL(url);
    url = undefined;
  };
  signal.addEventListener('abort', release);
  const update = () => {
    release();
    const threshold = Number(input.value);
    if (input.value.trim() === '' || !Number.isFinite(threshold) || threshold < 0 || threshold > 1) {
      counted.textContent = 'Enter a probability from 0 to 1 (0.75, say).';
      link.removeAttribute('href');
      link.removeAttribute('download');
      return;
    }
    const fixed = threshold.toFixed(2);
    const count = countAtOrAbove(probabilities, threshold);
    counted.textContent = `${count} of ${probabilities.length} catch-all addresses are at or above ${fixed}.`;
    url = URL.createObjectURL(new Blob([catchAllAtOrAbove(csv, threshold)], { type: 'text/csv;charset=utf-8' }));
    link.href = url;
    link.download = `${fileBase}-catch-all-${fixed}.csv`;
  };
  input.addEventListener('input', update);
  update();
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'catch-all' },
    h('h2', { id: 'catch-all' }, 'Catch-all addresses'),
    h(
      'p',
      {},
      `${probabilities.length} addresses are at domains whose mail servers accept any address, so their mailboxes cannot be confirmed. Each has the probability that it receives mail, learnt from the deliveries and hard bounces you reported at its domain and at your other catch-all domains (the Feedback page takes them); 0.75 while nothing is reported.`,
    ),
    histogram(probabilities),
    h('div', { class: 'axis-labels', 'aria-hidden': 'true' }, h('span', {}, '0'), h('span', {}, '0.5'), h('span', {}, '1')),
    h(
      'div',
      { class: 'field' },
      h('label', { for: 'min-probability' }, 'Minimum probability'),
      input,
      h(
        'small',
        { id: 'min-probability-hint' },
        'From 0 to 1: the download holds the catch-all rows at or above it, in the full form of the other downloads.',
      ),
    ),
    counted,
    h('p', {}, link),
  );
}
