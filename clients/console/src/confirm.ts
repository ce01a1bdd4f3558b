/**
 * A confirming dialog (`<dialog>` shown modal: focus moves into it, Escape closes it, the page
 * behind is inert), not `window.confirm`, whose wording and buttons the page cannot choose.
 */
import { h } from './dom.ts';

let opened = 0;

/** Resolves true when the person confirms, false when they decline or press Escape. */
export function confirmAction(question: string, explanation: string, confirmLabel: string, declineLabel: string): Promise<boolean> {
  opened += 1;
  const titleId = `confirm-title-${opened}`;
  const textId = `confirm-text-${opened}`;
  const yes = h('button', { type: 'button', class: 'danger', value: 'yes' }, confirmLabel);
  const no = h('button', { type: 'button', value: 'no' }, declineLabel);
  const dialog = h(
    'dialog',
    { 'aria-labelledby': titleId, 'aria-describedby': textId, class: 'confirm' },
    h('h2', { id: titleId }, question),
    h('p', { id: textId }, explanation),
    h('div', { class: 'row' }, no, yes),
  );
  document.body.append(dialog);
  return new Promise((resolve) => {
    let answer = false;
    yes.addEventListener('click', () => {
      answer = true;
      dialog.close();
    });
    no.addEventListener('click', () => dialog.close());
    dialog.addEventListener('close', () => {
      dialog.remove();
      resolve(answer);
    });
    dialog.showModal();
    // The safe choice has the focus: Enter on an unread dialog keeps the list running.
    no.focus();
  });
}

/** The confirmation of cancelling a list, from its page or from the history. */
export const confirmCancel = (name: string): Promise<boolean> =>
  confirmAction(
    `Cancel “${name}”?`,
    'Addresses not verified yet will never be verified nor billed. They stay in the results file as rows without a verdict (not_verified), so the file keeps every row you uploaded. A cancelled list cannot be resumed.',
    'Cancel list',
    'Keep verifying',
  );
