/** Sign-in: the key is checked against the API (GET /v1/usage, free) before it is kept for the tab. */
import { call, messageOf } from '../api.ts';
import { field, h } from '../dom.ts';
import { signIn } from '../session.ts';

export function signInPage(onSignedIn: () => void): HTMLElement {
  const input = h('input', { type: 'password', name: 'key', autocomplete: 'off', spellcheck: 'false', required: true });
  const error = h('p', { class: 'error', role: 'alert' });
  const button = h('button', { type: 'submit' }, 'Sign in');
  const form = h(
    'form',
    { class: 'card narrow' },
    h('h1', {}, 'Sign in'),
    h('p', {}, 'Enter an API key. It is kept in this browser tab only and sent to this service alone.'),
    field('API key', input, 'Keys start with sk_.'),
    button,
    error,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const key = input.value.trim();
    button.disabled = true;
    error.textContent = '';
    call('/v1/usage', {}, key)
      .then(() => {
        signIn(key);
        onSignedIn();
      })
      .catch((failure: unknown) => {
        error.textContent = messageOf(failure);
        input.focus();
      })
      .finally(() => (button.disabled = false));
  });
  queueMicrotask(() => input.focus());
  return form;
}
