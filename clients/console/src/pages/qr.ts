/**
 * QR studio: content, scale, margin and colours; a live preview from GET /v1/qr/qr (one metered
 * call per change, after a pause in typing); SVG as the API drew it, PNG drawn from that SVG on a
 * canvas here, at the API's pixel size.
 */
import { call, messageOf } from '../api.ts';
import { field, h, saveAs } from '../dom.ts';

const PAUSE_MS = 300;

async function pngOf(image: HTMLImageElement): Promise<Blob> {
  await image.decode();
  const canvas = h('canvas', { width: image.naturalWidth, height: image.naturalHeight });
  const context = canvas.getContext('2d');
  if (context === null) throw new Error('This browser cannot draw a PNG.');
  context.drawImage(image, 0, 0);
  return new Promise((resolve, reject) =>
    canvas.toBlob((blob) => (blob === null ? reject(new Error('This browser cannot draw a PNG.')) : resolve(blob)), 'image/png'),
  );
}

export function qrPage(): HTMLElement {
  const content = h('input', { type: 'text', value: 'https://example.com', maxlength: 800 });
  const scale = h('input', { type: 'number', min: 1, max: 40, step: 1, value: 8 });
  const margin = h('input', { type: 'number', min: 0, max: 20, step: 1, value: 4 });
  const dark = h('input', { type: 'color', value: '#000000' });
  const light = h('input', { type: 'color', value: '#ffffff' });
  const preview = h('img', { alt: 'QR code preview', class: 'qr' });
  const error = h('p', { class: 'error', role: 'alert' });
  const downloadSvg = h('button', { type: 'button', disabled: true }, 'Download SVG');
  const downloadPng = h('button', { type: 'button', disabled: true }, 'Download PNG');
  let current: { svg: Blob; url: string } | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let asked = 0;

  const render = async () => {
    const ask = (asked += 1);
    const query = new URLSearchParams({
      data: content.value,
      scale: scale.value,
      margin: margin.value,
      dark: dark.value,
      light: light.value,
    });
    try {
      const blob = await (await call(`/v1/qr/qr?${query.toString()}`)).blob();
      if (ask !== asked) return;
      if (current !== undefined) URL.revokeObjectURL(current.url);
      current = { svg: new Blob([blob], { type: 'image/svg+xml' }), url: '' };
      current.url = URL.createObjectURL(current.svg);
      preview.src = current.url;
      error.textContent = '';
      downloadSvg.disabled = downloadPng.disabled = false;
    } catch (failure) {
      if (ask !== asked) return;
      error.textContent = messageOf(failure);
      downloadSvg.disabled = downloadPng.disabled = true;
    }
  };
  const schedule = () => {
    clearTimeout(timer);
    timer = setTimeout(() => void render(), PAUSE_MS);
  };
  for (const control of [content, scale, margin, dark, light]) control.addEventListener('input', schedule);

  downloadSvg.addEventListener('click', () => current !== undefined && saveAs(current.svg, 'qr-code.svg'));
  downloadPng.addEventListener('click', () => {
    pngOf(preview).then(
      (png) => saveAs(png, 'qr-code.png'),
      (failure: unknown) => (error.textContent = messageOf(failure)),
    );
  });
  void render();

  return h(
    'section',
    { class: 'qr-studio' },
    h('h1', {}, 'QR studio'),
    h(
      'div',
      { class: 'split' },
      h(
        'div',
        { class: 'card' },
        field('Content', content, 'Text or a URL, up to 800 characters. Each preview is one QR call (free allowance first).'),
        h(
          'div',
          { class: 'row' },
          field('Scale', scale, 'Pixels per module, 1–40.'),
          field('Margin', margin, 'Quiet zone in modules, 0–20.'),
        ),
        h('div', { class: 'row' }, field('Dark colour', dark), field('Light colour', light)),
        error,
      ),
      h('div', { class: 'card preview' }, preview, h('div', { class: 'row' }, downloadSvg, downloadPng)),
    ),
  );
}
