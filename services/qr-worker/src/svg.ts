/**
 * SVG drawn from the module matrix rather than by `qrcode`'s own renderer, which does not
 * validate colours (a crafted colour would inject markup), ignores `scale`, and strokes its paths
 * (banding in some viewers). Here: filled shapes, one path of horizontal runs, width and height in
 * pixels, viewBox in modules, crispEdges. Colours arrive normalised to `#rrggbbaa`.
 */
import type { ModuleMatrix } from './encode.ts';

const COLOUR = /^#[0-9a-f]{8}$/;

function paint(colour: string): { fill: string; opacity: number } {
  if (!COLOUR.test(colour)) throw new Error('colour not normalised');
  return { fill: colour.slice(0, 7), opacity: Number.parseInt(colour.slice(7), 16) / 255 };
}

const fillAttributes = ({ fill, opacity }: { fill: string; opacity: number }) =>
  opacity >= 1 ? `fill="${fill}"` : `fill="${fill}" fill-opacity="${Number(opacity.toFixed(3))}"`;

export function darkModulesPath(matrix: ModuleMatrix, margin: number): string {
  const { size, modules } = matrix;
  const parts: string[] = [];
  for (let y = 0; y < size; y += 1) {
    let x = 0;
    while (x < size) {
      if (modules[y * size + x] !== 1) {
        x += 1;
        continue;
      }
      const start = x;
      while (x < size && modules[y * size + x] === 1) x += 1;
      const run = x - start;
      parts.push(`M${start + margin} ${y + margin}h${run}v1h-${run}z`);
    }
  }
  return parts.join('');
}

export function renderSvg(matrix: ModuleMatrix, options: { scale: number; margin: number; dark: string; light: string }): string {
  const modules = matrix.size + 2 * options.margin;
  const pixels = modules * options.scale;
  const light = paint(options.light);
  const dark = paint(options.dark);
  const background = light.opacity === 0 ? '' : `<rect width="${modules}" height="${modules}" ${fillAttributes(light)}/>`;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${pixels}" height="${pixels}" viewBox="0 0 ${modules} ${modules}" shape-rendering="crispEdges">` +
    `${background}<path ${fillAttributes(dark)} d="${darkModulesPath(matrix, options.margin)}"/></svg>`
  );
}
