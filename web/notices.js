// Lists of issues (the core's {field_path, message} values): the link notice at the top of the
// page and the items shown under inputs, the config status and the results panel; the status
// line of a config check.
import { el } from './format.js';
import { clip, tooLargeMessage } from './limits.js';

// One issue as a list item: the field path as code, the message as text (both cut to a readable
// length: a hostile link can make either megabytes long).
export function issueItem(it) {
  const path = it.field_path ? clip(it.field_path) : '';
  return el('li', {}, path ? el('code', { text: path }) : null, path ? ': ' : null, clip(it.message ?? '', 1000));
}

export function showNotice(box, title, items = []) {
  box.replaceChildren();
  if (!title) { box.hidden = true; return; }
  box.append(el('p', { text: title }));
  const ul = el('ul');
  for (const it of items) ul.append(issueItem(it));
  box.append(ul, el('button', { type: 'button', class: 'link', text: 'Dismiss' }));
  box.lastChild.addEventListener('click', () => { box.hidden = true; });
  box.hidden = false;
}

// kind: 'bad' | 'good' | null (busy: a check is under way; data-state says which).
export function showConfigStatus(statusEl, kind, text, items = []) {
  statusEl.classList.remove('bad', 'good');
  if (kind) statusEl.classList.add(kind);
  statusEl.dataset.state = kind || 'busy';
  statusEl.replaceChildren(el('span', { text }));
  if (items.length) {
    const ul = el('ul');
    for (const it of items) ul.append(issueItem(it));
    statusEl.append(ul);
  }
}

export function refuseTooLarge(statusEl, source, bytes, { atLeast = false } = {}) {
  showConfigStatus(statusEl, 'bad', `${clip(source, 100)}: not read, ${tooLargeMessage(bytes, { atLeast })}.`);
  return false;
}
