/**
 * The console's router: `#/lists`, `#/lists/<id>`, `#/qr`, `#/usage`, `#/feedback`; the sign-in page while no
 * key is kept for this tab. Each page gets an AbortSignal that ends its polling and requests when
 * the user leaves it.
 */
import './style.css';
import { fill, h } from './dom.ts';
import { listView } from './pages/list-view.ts';
import { listsPage } from './pages/lists.ts';
import { signInPage } from './pages/sign-in.ts';
import { usagePage } from './pages/usage.ts';
import { currentKey, signOut } from './session.ts';

const main = document.getElementById('main');
const nav = document.getElementById('nav');
const PAGES = [
  ['#/lists', 'Lists'],
  ['#/qr', 'QR studio'],
  ['#/usage', 'Usage'],
  ['#/feedback', 'Feedback'],
] as const;
let leaving = new AbortController();

function navigation(route: string): HTMLElement {
  const out = h('button', { type: 'button', class: 'link' }, 'Sign out');
  out.addEventListener('click', () => {
    signOut();
    location.hash = '#/lists';
    render();
  });
  return h(
    'ul',
    {},
    ...PAGES.map(([href, label]) => h('li', {}, h('a', { href, 'aria-current': route.startsWith(href) ? 'page' : false }, label))),
    h('li', {}, out),
  );
}

/**
 * A page loaded on first visit (its own chunk): the QR studio bundles the product's encoder, which
 * the lists pages never need, and the Feedback page is visited now and then; the first load stays
 * small.
 */
function lazy(load: () => Promise<HTMLElement>, signal: AbortSignal): HTMLElement {
  const holder = h('div', {}, h('p', {}, 'Loading…'));
  load().then(
    (content) => {
      if (signal.aborted) return;
      fill(holder, content);
      setTitle(content);
    },
    (failure: unknown) =>
      fill(holder, h('p', { class: 'error', role: 'alert' }, failure instanceof Error ? failure.message : String(failure))),
  );
  return holder;
}

function setTitle(content: HTMLElement): void {
  const heading = content.querySelector('h1')?.textContent ?? 'Console';
  document.title = `${heading} · Verify & QR console`;
}

function page(route: string, signal: AbortSignal): HTMLElement {
  const list = /^#\/lists\/([^/]+)$/.exec(route);
  if (list?.[1] !== undefined) return listView(decodeURIComponent(list[1]), signal);
  if (route === '#/qr') return lazy(async () => (await import('./pages/qr.ts')).qrPage(), signal);
  if (route === '#/usage') return usagePage();
  if (route === '#/feedback') return lazy(async () => (await import('./pages/feedback.ts')).feedbackPage(), signal);
  return listsPage((id) => (location.hash = `#/lists/${encodeURIComponent(id)}`));
}

function render(): void {
  if (main === null || nav === null) return;
  leaving.abort();
  leaving = new AbortController();
  const route = location.hash === '' ? '#/lists' : location.hash;
  if (currentKey() === null) {
    fill(nav);
    fill(main, signInPage(render));
    document.title = 'Sign in · Verify & QR console';
    return;
  }
  fill(nav, navigation(route));
  const content = page(route, leaving.signal);
  fill(main, content);
  setTitle(content);
  main.focus({ preventScroll: true });
}

window.addEventListener('hashchange', render);
render();
