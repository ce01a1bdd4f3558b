/**
 * QR studio: a text or a wifi network, scale, margin and colours. The preview is drawn here, by
 * the product's own encoder and the service's own rules (../qr/draw.ts), so looking costs
 * nothing; only `Download SVG` and `Download PNG` call the API (one billed call each, free
 * allowance first). The PNG is the API's SVG drawn on a canvas at print size (1,200 px or more).
 */
import { call, messageOf } from '../api.ts';
import { field, h, saveAs } from '../dom.ts';
import { encode, fileNameOf, previewSvg, printSide, requestOf, type Content, type Request } from '../qr/draw.ts';

async function pngOf(svg: Blob, side: number): Promise<Blob> {
  const url = URL.createObjectURL(svg);
  try {
    const image = new Image();
    image.src = url;
    await image.decode();
    const canvas = h('canvas', { width: side, height: side });
    const context = canvas.getContext('2d');
    if (context === null) throw new Error('This browser cannot draw a PNG.');
    // The SVG is vector: drawn at a whole number of pixels per module, the modules stay sharp.
    context.imageSmoothingEnabled = false;
    context.drawImage(image, 0, 0, side, side);
    return await new Promise((resolve, reject) =>
      canvas.toBlob((blob) => (blob === null ? reject(new Error('This browser cannot draw a PNG.')) : resolve(blob)), 'image/png'),
    );
  } finally {
    URL.revokeObjectURL(url);
  }
}

const radio = (name: string, value: string, label: string, checked: boolean) => {
  const input = h('input', { type: 'radio', name, value, id: `${name}-${value}`, checked });
  return { input, node: h('label', { for: input.id, class: 'choice' }, input, ` ${label}`) };
};

export function qrPage(): HTMLElement {
  const textKind = radio('qr-kind', 'text', 'Text or URL', true);
  const wifiKind = radio('qr-kind', 'wifi', 'Wifi network', false);
  const content = h('input', { type: 'text', value: 'https://example.com', maxlength: 800 });
  const ssid = h('input', { type: 'text', autocomplete: 'off', spellcheck: 'false' });
  const password = h('input', { type: 'text', autocomplete: 'off', spellcheck: 'false' });
  const security = h(
    'select',
    {},
    h('option', { value: 'WPA' }, 'WPA / WPA2 / WPA3'),
    h('option', { value: 'WEP' }, 'WEP'),
    h('option', { value: 'nopass' }, 'None (open network)'),
  );
  const hidden = h('input', { type: 'checkbox', id: 'f-hidden-network' });
  const scale = h('input', { type: 'number', min: 1, max: 40, step: 1, value: 8 });
  const margin = h('input', { type: 'number', min: 0, max: 20, step: 1, value: 4 });
  const dark = h('input', { type: 'color', value: '#000000' });
  const light = h('input', { type: 'color', value: '#ffffff' });
  const pngSize = h(
    'select',
    {},
    h('option', { value: 'print' }, 'Print: 1,200 px or more'),
    h('option', { value: 'screen' }, 'Screen: the scale above'),
  );
  const preview = h('img', { alt: 'QR code preview', class: 'qr' });
  const about = h('p', { class: 'muted', 'aria-live': 'polite' });
  const error = h('p', { class: 'error', role: 'alert' });
  const downloadSvg = h('button', { type: 'button' }, 'Download SVG');
  const downloadPng = h('button', { type: 'button' }, 'Download PNG');
  const textForm = h(
    'fieldset',
    { class: 'plain' },
    h('legend', { class: 'visually-hidden' }, 'Text or URL'),
    field('Content', content, 'Text or a URL, up to 800 characters.'),
  );
  const wifiForm = h(
    'fieldset',
    { class: 'plain', hidden: true },
    h('legend', { class: 'visually-hidden' }, 'Wifi network'),
    field('Network name', ssid, 'The SSID, as phones list it (1 to 32 bytes).'),
    field('Password', password, 'WPA: 8 to 63 characters; WEP: 5 or 13.'),
    field('Security', security),
    h('div', { class: 'field inline' }, hidden, h('label', { for: hidden.id }, 'Hidden network')),
  );
  let previewUrl: string | undefined;
  let shown: { request: Request; content: Content; modules: number } | undefined;

  const contentOf = (): Content =>
    wifiKind.input.checked
      ? {
          kind: 'wifi',
          ssid: ssid.value,
          password: password.value,
          security: security.value === 'WEP' ? 'WEP' : security.value === 'nopass' ? 'nopass' : 'WPA',
          hidden: hidden.checked,
        }
      : { kind: 'text', data: content.value };

  const draw = () => {
    textForm.hidden = wifiKind.input.checked;
    wifiForm.hidden = !wifiKind.input.checked;
    password.disabled = security.value === 'nopass';
    try {
      const what = contentOf();
      const request = requestOf(what, { scale: scale.value, margin: margin.value, dark: dark.value, light: light.value });
      const matrix = encode(request);
      if (previewUrl !== undefined) URL.revokeObjectURL(previewUrl);
      previewUrl = URL.createObjectURL(new Blob([previewSvg(matrix, request)], { type: 'image/svg+xml' }));
      preview.src = previewUrl;
      const modules = matrix.size + 2 * request.margin;
      shown = { request, content: what, modules };
      about.textContent = `Version ${matrix.version}, ${matrix.size} × ${matrix.size} modules; SVG ${modules * request.scale} px, print PNG ${printSide(modules)} px. File: ${fileNameOf(what)}.`;
      error.textContent = '';
      downloadSvg.disabled = downloadPng.disabled = false;
    } catch (failure) {
      shown = undefined;
      error.textContent = messageOf(failure);
      downloadSvg.disabled = downloadPng.disabled = true;
    }
  };
  for (const control of [textKind.input, wifiKind.input, content, ssid, password, security, hidden, scale, margin, dark, light])
    control.addEventListener('input', draw);
  security.addEventListener('change', draw);

  // A download is one call of the API (billed, free allowance first); a refusal shows its message.
  const fetchSvg = async (request: Request) => (await call(`${request.path}?${request.query.toString()}`)).blob();
  const download = (button: HTMLButtonElement, save: (svg: Blob, what: NonNullable<typeof shown>) => Promise<void>) =>
    button.addEventListener('click', () => {
      const what = shown;
      if (what === undefined) return;
      button.disabled = true;
      fetchSvg(what.request)
        .then((svg) => save(new Blob([svg], { type: 'image/svg+xml' }), what))
        .catch((failure: unknown) => (error.textContent = messageOf(failure)))
        .finally(() => (button.disabled = false));
    });
  download(downloadSvg, (svg, what) => Promise.resolve(saveAs(svg, `${fileNameOf(what.content)}.svg`)));
  download(downloadPng, async (svg, what) => {
    const side = pngSize.value === 'print' ? printSide(what.modules) : what.modules * what.request.scale;
    saveAs(await pngOf(svg, side), `${fileNameOf(what.content)}.png`);
  });
  draw();

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
        h(
          'fieldset',
          { class: 'plain kinds' },
          h('legend', {}, 'What the code holds'),
          h('div', { class: 'row' }, textKind.node, wifiKind.node),
        ),
        textForm,
        wifiForm,
        h(
          'div',
          { class: 'row' },
          field('Scale', scale, 'Pixels per module, 1–40.'),
          field('Margin', margin, 'Quiet zone in modules, 0–20.'),
        ),
        h('div', { class: 'row' }, field('Dark colour', dark), field('Light colour', light)),
        field('PNG size', pngSize),
        h(
          'p',
          { class: 'muted' },
          'The preview is drawn in your browser and costs nothing; each download is one QR call (free allowance first).',
        ),
        error,
      ),
      h('div', { class: 'card preview' }, preview, about, h('div', { class: 'row' }, downloadSvg, downloadPng)),
    ),
  );
}
