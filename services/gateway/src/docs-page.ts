/**
 * The interactive docs page (/docs: Swagger UI through @fastify/swagger-ui) as this product's
 * own: its name as the title, its mark as logo and favicon (the plugin's defaults are fastify's
 * and Swagger's), and the QR answer shown as the picture it is. Swagger UI shows an SVG answer as
 * source text (an inline SVG could run script) and cannot make an example of a string under an
 * XML media type; a small Swagger UI plugin draws both through an `<img>`, where an SVG runs
 * nothing.
 */
import type { FastifySwaggerUiOptions } from '@fastify/swagger-ui';

export const PRODUCT_NAME = 'Email verification and QR code API';

/** Said wherever a key is typed in: the page makes real calls. */
export const BILLING_NOTE =
  'Calls made from this page (Try it out, then Execute) are real calls with your key: metered, rate-limited and billed like any other, the free allowance first.';

const NAVY = '#1a237e';

/** A QR finder pattern beside an envelope flap: the two things the product makes sense of. */
const MARK =
  `<rect x="1" y="1" width="22" height="22" rx="3" fill="none" stroke="#fff" stroke-width="2.5"/>` +
  `<rect x="7" y="7" width="10" height="10" rx="1" fill="#fff"/>` +
  `<path d="M27 5h18v14H27z" fill="none" stroke="#fff" stroke-width="2.5" stroke-linejoin="round"/>` +
  `<path d="M27 5l9 7 9-7" fill="none" stroke="#fff" stroke-width="2.5" stroke-linejoin="round"/>`;

const LOGO_SVG =
  `<svg xmlns="http://www.w3.org/2000/svg" width="420" height="24" viewBox="0 0 420 24">${MARK}` +
  `<text x="56" y="18" font-family="Helvetica, Arial, sans-serif" font-size="17" font-weight="700" fill="#fff">${PRODUCT_NAME}</text></svg>`;

const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="48" height="24" viewBox="0 0 48 24"><rect width="48" height="24" fill="${NAVY}"/>${MARK}</svg>`;

const CSS = `
.swagger-ui .topbar { background-color: ${NAVY}; }
.swagger-ui .topbar .download-url-wrapper { display: none; }
.swagger-ui .topbar-wrapper img { height: 24px; }
.swagger-ui .qr-svg-picture { margin: 0 0 12px; }
.swagger-ui .qr-svg-picture img { max-width: 240px; background: #fff; border: 1px solid #d9d9d9; }
.swagger-ui .qr-svg-picture figcaption { font-size: 12px; color: #555; }
`;

/**
 * Runs in the browser, given to Swagger UI as a plugin. Swagger UI writes a string example of an
 * XML media type inside an element named after the schema (`xml.name`: `svg`), escaped; that is
 * undone here and the SVG drawn above its text. A live SVG answer is drawn above its text too.
 */
const SVG_AS_IMAGE_PLUGIN = `function svgAsImage(system) {
  var React = system.React;
  var WRAPPED = /^<\\?xml[^>]*>\\s*<svg>([\\s\\S]*)<\\/svg>\\s*$/;
  function unescapeXml(text) {
    return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&');
  }
  function picture(svg, caption) {
    return React.createElement('figure', { className: 'qr-svg-picture' },
      React.createElement('img', { src: 'data:image/svg+xml;charset=utf-8,' + encodeURIComponent(svg), alt: caption }),
      React.createElement('figcaption', null, caption));
  }
  return {
    wrapComponents: {
      HighlightCode: function (Original) {
        return function (props) {
          var wrapped = typeof props.children === 'string' ? WRAPPED.exec(props.children) : null;
          if (wrapped === null) return React.createElement(Original, props);
          var svg = unescapeXml(wrapped[1]);
          return React.createElement('div', null, picture(svg, 'The example answer, as the image it is'),
            React.createElement(Original, Object.assign({}, props, { children: svg })));
        };
      },
      responseBody: function (Original) {
        return function (props) {
          var svg = /^image\\/svg\\+xml/i.test(String(props.contentType || '')) && typeof props.content === 'string';
          if (!svg) return React.createElement(Original, props);
          return React.createElement('div', null, picture(props.content, 'This answer, as the image it is'), React.createElement(Original, props));
        };
      }
    }
  };
}`;

type SwaggerUiPlugin = NonNullable<NonNullable<FastifySwaggerUiOptions['uiConfig']>['plugins']>[number];

/**
 * Browser code for the page's configuration: @fastify/swagger-ui writes a function into the page
 * as its `toString()`, so this stand-in's text is the code.
 */
const browserCode = (source: string): SwaggerUiPlugin => Object.assign(() => ({}), { toString: () => source });

export const DOCS_PAGE_OPTIONS: FastifySwaggerUiOptions = {
  theme: {
    title: `${PRODUCT_NAME}: interactive docs`,
    css: [{ filename: 'product.css', content: CSS }],
    favicon: [{ filename: 'favicon.svg', rel: 'icon', type: 'image/svg+xml', sizes: 'any', content: FAVICON_SVG }],
  },
  logo: { type: 'image/svg+xml', content: LOGO_SVG, href: '/docs' },
  uiConfig: {
    // The default plugin (the URL box, hidden by the CSS) and the SVG one.
    plugins: [browserCode('SwaggerUIBundle.plugins.DownloadUrl'), browserCode(SVG_AS_IMAGE_PLUGIN)],
    displayRequestDuration: true,
  },
};
