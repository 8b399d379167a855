// Lists of issues (the core's {field_path, message} values): the link notice at the top of the
// page and the items shown under inputs, the config status and the results panel.
import { el } from './format.js';
import { clip } from './limits.js';

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
