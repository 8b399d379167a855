// The form view: controls built from the core's JSON Schema (fields.js: which, where, labels);
// edit -> candidate scenario; scenario -> controls; errors next to the controls.
import { FIELDS, GROUPS, OPTION_LABELS, schemaNode, getPath, setPath } from './fields.js';
import { el } from './format.js';
import { clip } from './limits.js';
import { issueItem } from './notices.js';
import { convert } from './state.js';

const $ = (id) => document.getElementById(id);

// The user's choices, copied for editing. An inline config (choices.model as an object) is never
// modified once accepted, so it is shared, not copied: copying it on every keystroke would cost
// time in proportion to its size.
export function cloneChoices(c) {
  if (!c || typeof c.model !== 'object' || c.model === null) return structuredClone(c);
  const copy = structuredClone({ ...c, model: null });
  copy.model = c.model;
  return copy;
}
export const sameChoices = (a, b) => a.model === b.model && JSON.stringify({ ...a, model: null }) === JSON.stringify({ ...b, model: null });

function fieldId(path) { return `f-${path.replace(/\./g, '-')}`; }

function optionLabel(path, value) { return OPTION_LABELS[path]?.[String(value)] ?? String(value).replace(/_/g, ' '); }

function buildControl(f, node) {
  const id = fieldId(f.path);
  const describedBy = `${id}-help`;
  let control;
  let kind;
  const isCheckpointing = node.oneOf?.some((a) => a.type === 'boolean') && node.oneOf?.some((a) => a.const !== undefined);
  const isTargets = node.oneOf?.some((a) => a.type === 'array');
  if (isCheckpointing) {
    kind = 'bool-or-const';
    control = el('select', { id });
    for (const v of [false, true, ...node.oneOf.filter((a) => a.const !== undefined).map((a) => a.const)]) control.append(el('option', { value: String(v), text: optionLabel(f.path, v) }));
  } else if (isTargets) {
    kind = 'list-or-const';
    control = el('input', { id, type: 'text', autocomplete: 'off', spellcheck: 'false', placeholder: 'all-linear or q_proj,v_proj' });
  } else if (node.type === 'array' && node.items?.enum) {
    kind = 'enum-set';
    control = el('div', { id, class: 'checks', role: 'group', 'aria-labelledby': `${id}-label` });
    for (const v of node.items.enum) {
      const cb = el('input', { type: 'checkbox', id: `${id}-${v}`, value: v, 'data-path': f.path, 'aria-describedby': describedBy });
      control.append(el('label', { class: 'check', for: `${id}-${v}` }, cb, ` ${v}`));
    }
  } else if (node.enum || (node.type === 'integer' && OPTION_LABELS[f.path])) {
    kind = 'enum';
    control = el('select', { id });
    if (f.auto) control.append(el('option', { value: '', text: f.auto }));
    const values = node.enum ?? Object.keys(OPTION_LABELS[f.path]).map(Number);
    for (const v of values) control.append(el('option', { value: String(v), text: optionLabel(f.path, v) }));
  } else if (node.type === 'boolean' && f.auto) {
    kind = 'bool-auto';  // optional switch whose default depends on other fields
    control = el('select', { id });
    for (const [value, text] of [['', f.auto], ['true', 'on'], ['false', 'off']]) control.append(el('option', { value, text }));
  } else if (node.type === 'boolean') {
    kind = 'bool';
    control = el('input', { id, type: 'checkbox' });
  } else if (node.type === 'integer' || node.type === 'number') {
    kind = 'number';
    control = el('input', {
      id, type: 'number', inputmode: node.type === 'integer' ? 'numeric' : 'decimal',
      min: node.minimum, max: node.maximum, step: f.step ?? (node.type === 'integer' ? 1 : 'any'), placeholder: f.placeholder,
      list: f.list ? `${id}-list` : undefined,
    });
  } else {
    kind = 'text';
    control = el('input', { id, type: 'text', placeholder: f.placeholder });
  }
  if (kind !== 'enum-set') {
    control.dataset.path = f.path;
    control.setAttribute('aria-describedby', describedBy);
  }
  control.dataset.kind = kind;
  return control;
}

function readControl(schema, c) {
  const kind = c.dataset.kind;
  const node = schemaNode(schema, c.dataset.path);
  switch (kind) {
    case 'bool': return c.checked;
    case 'bool-or-const': return c.value === 'true' ? true : c.value === 'false' ? false : c.value;
    case 'bool-auto': return c.value === '' ? undefined : c.value === 'true';
    case 'list-or-const': {
      const t = c.value.trim();
      return t === 'all-linear' ? t : t.split(',').map((s) => s.trim()).filter(Boolean);
    }
    case 'enum': {
      if (c.value === '') return undefined;
      const values = node.enum ?? Object.keys(OPTION_LABELS[c.dataset.path]).map(Number);
      return values.find((v) => String(v) === c.value) ?? c.value;
    }
    case 'number': {
      if (c.value.trim() === '') return c.validity.badInput ? c.value : null;
      return Number(c.value);
    }
    // parallel.pp_layers "9,8,8,7" as a link reads it
    default: return node.items ? (c.value.trim() ? convert(node, c.value.replace(/\s/g, '')) : undefined) : c.value;
  }
}

function controlFor(fieldPath) {
  if (!fieldPath || fieldPath.length > 200) return null;
  if (fieldPath.startsWith('gpu')) return fieldPath === 'gpu' ? $('gpu') : $('gpu-mem');
  let p = fieldPath.replace(/\[\d+\]/g, '');
  while (p) {
    const c = document.querySelector(`[data-path="${CSS.escape(p)}"]`);
    if (c) return c;
    p = p.includes('.') ? p.slice(0, p.lastIndexOf('.')) : '';
  }
  return null;
}

// Builds the groups into #groups (engine and framework after it). onEdit(control, event) is
// called for every input/change event on a scenario control.
export function createForm({ schema }) {
  const host = $('groups');
  for (const g of GROUPS) {
    const fields = FIELDS.filter((f) => f.group === g.id && schemaNode(schema, f.path));
    if (!fields.length) continue;
    const fs = el('fieldset', { class: 'group', id: `g-${g.id}` }, el('legend', { text: g.title }));
    let body = fs;
    if (g.collapsed) {
      body = el('details', { class: 'sub' }, el('summary', { text: 'Show' }));
      fs.append(body);
    }
    const grid = el('div', { class: 'grid2' });
    body.append(grid);
    for (const f of fields) {
      const node = schemaNode(schema, f.path);
      const control = buildControl(f, node);
      const id = fieldId(f.path);
      const wrap = el('div', { class: `field${control.dataset.kind === 'bool' ? ' field-check' : ''}`, 'data-field': f.path });
      const label = el('label', { for: control.dataset.kind === 'enum-set' ? undefined : id, id: `${id}-label`, text: f.label });
      if (control.dataset.kind === 'bool') wrap.append(el('div', { class: 'check' }, control, label));
      else wrap.append(label, control);
      if (f.list) {
        const dl = el('datalist', { id: `${id}-list` });
        for (const v of f.list) dl.append(el('option', { value: v }));
        wrap.append(dl);
      }
      wrap.append(el('small', { class: 'help', id: `${id}-help`, text: f.help }));
      grid.append(wrap);
    }
    host.append(fs);
  }
  // The controls and their field wrappers, looked up once (syncing runs on every edit).
  const controls = [...document.querySelectorAll('#inputs [data-path]')];
  const wraps = FIELDS.map((f) => [f, document.querySelector(`[data-field="${CSS.escape(f.path)}"]`)]).filter(([, w]) => w);
  const groups = GROUPS.map((g) => [g, $(`g-${g.id}`)]).filter(([, fs]) => fs);

  return {
    // The candidate scenario with the edited control applied; null when there is nothing to apply
    // (an empty number box while typing, a control outside the scenario fields).
    candidate(choices, target) {
      const path = target.dataset.path;
      if (!path || !target.closest('#groups')) return null;
      const s = cloneChoices(choices);
      if (target.closest('.checks')) {
        setPath(s, path, [...target.closest('.checks').querySelectorAll('input:checked')].map((x) => x.value));
        return s;
      }
      const value = readControl(schema, target);
      if (value === null) return null;
      setPath(s, path, value);
      return s;
    },

    // Shows the normalized scenario in the controls (never touching the control being edited) and
    // hides the fields and groups that do not apply to it.
    sync(s) {
      const active = document.activeElement;
      for (const c of controls) {
        const v = getPath(s, c.dataset.path);
        if (c.type === 'checkbox' && c.closest('.checks')) { c.checked = Array.isArray(v) && v.includes(c.value); continue; }
        if (c === active && c.dataset.kind !== 'bool' && c.tagName !== 'SELECT') continue;
        switch (c.dataset.kind) {
          case 'bool': c.checked = !!v; break;
          case 'list-or-const': c.value = Array.isArray(v) ? v.join(',') : (v ?? ''); break;
          case 'number': if (c.value === '' || Number(c.value) !== v) c.value = v ?? ''; break;
          case 'bool-auto': c.value = v === undefined ? '' : String(v); break;
          default: c.value = v === undefined ? '' : String(v);
        }
      }
      for (const [f, wrap] of wraps) wrap.hidden = f.show ? !f.show(s) : false;
      for (const [g, fs] of groups) fs.hidden = (g.show && !g.show(s)) || ![...fs.querySelectorAll('[data-field]')].some((w) => !w.hidden);
    },

    // The core's errors for a rejected input: next to each control (aria-invalid) and in the
    // results panel. [] clears them.
    showErrors(errors) {
      for (const c of document.querySelectorAll('[aria-invalid="true"]')) c.removeAttribute('aria-invalid');
      for (const m of document.querySelectorAll('.field-error')) m.remove();
      const box = $('field-errors');
      box.replaceChildren();
      box.hidden = errors.length === 0;
      $('results').classList.toggle('stale', errors.length > 0);
      if (!errors.length) return;
      box.append(el('p', { text: 'Not recomputed — fix this input (the numbers below are for the previous scenario):' }));
      const ul = el('ul');
      for (const e of errors) {
        ul.append(issueItem(e));
        const c = controlFor(e.field_path);
        if (c) {
          c.setAttribute('aria-invalid', 'true');
          c.closest('.field')?.append(el('div', { class: 'field-error', text: clip(e.message ?? '', 1000) }));
        }
      }
      box.append(ul);
    },
  };
}
