// The Plans panel: when the job does not fit (or fits with little headroom), the core's planner
// (the `plan` op, docs/planner.md), run in the worker, lists the plans that make it fit: what each
// changes, its memory, its relative cost and fidelity, a one-click Apply (the URL carries the
// applied plan), a cost x fidelity chart, the fewest GPUs of this kind with the cheapest parallel
// layout at that count (Apply too) and the larger GPUs on which the job fits unchanged. Loaded by app.js the first time a result needs it, and styled here
// (a constructed style sheet) so that the page's first download does not grow (docs/web.md, "Page weight").
// Formatting only: every number is the core's.
import { gib, exactBytes, el } from './format.js';

const $ = (id) => document.getElementById(id);
const NS = 'http://www.w3.org/2000/svg';

const CSS = `
#plans-box{margin:1rem 0;padding:.75rem;border:1px solid var(--border,#ccc);border-radius:6px}
#plans-box h3{margin:0 0 .5rem;font-size:1rem}
#plans-box .plan-controls{display:flex;gap:1rem;flex-wrap:wrap;align-items:center;margin-bottom:.5rem;font-size:.9rem}
#plans-box .plan-controls input[type=number]{width:4.5rem}
#plans-box table{width:100%;border-collapse:collapse;font-size:.9rem}
#plans-box td,#plans-box th{padding:.25rem .4rem;border-top:1px solid var(--border,#ddd);vertical-align:top;text-align:left}
#plans-box td.num{text-align:right;white-space:nowrap}
#plans-box .why{font-size:.8rem}
#plans-box svg.pareto{max-width:320px;display:block;margin:.5rem 0}
#plans-box svg.pareto circle{fill:var(--c-weights,#36c)}
#plans-box svg.pareto text{font-size:9px;fill:currentColor}
`;

function svg(tag, attrs) {
  const n = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, String(v));
  return n;
}

// choices with each changed path (a scenario path, "train.optimizer") set to the plan's value.
export function withChanges(choices, changes) {
  const out = structuredClone(choices);
  for (const [path, value] of Object.entries(changes)) {
    const keys = path.split('.');
    let o = out;
    for (const k of keys.slice(0, -1)) {
      if (typeof o[k] !== 'object' || o[k] === null || Array.isArray(o[k])) o[k] = {};
      o = o[k];
    }
    o[keys[keys.length - 1]] = value;
  }
  return out;
}

// A cost (x) x fidelity (y) scatter of the plans, each point numbered as its row.
function pareto(plans) {
  const w = 320; const h = 150; const pad = 28;
  const costs = plans.map((p) => p.cost);
  const lo = Math.min(...costs, 1); const hi = Math.max(...costs, 1);
  const fids = plans.map((p) => p.fidelity);
  const flo = Math.min(...fids, 100) - 2;
  const x = (c) => pad + ((Math.log(c) - Math.log(lo)) / Math.max(1e-9, Math.log(hi) - Math.log(lo))) * (w - 2 * pad);
  const y = (f) => h - pad - ((f - flo) / Math.max(1, 100 - flo)) * (h - 2 * pad);
  const root = svg('svg', { viewBox: `0 0 ${w} ${h}`, class: 'pareto', role: 'img', 'aria-label': 'Plans by relative cost (x, log scale) and fidelity (y)' });
  root.append(svg('line', { x1: pad, x2: w - pad, y1: h - pad, y2: h - pad, stroke: 'currentColor' }),
    svg('line', { x1: pad, x2: pad, y1: pad / 2, y2: h - pad, stroke: 'currentColor' }));
  const label = (t, ax, ay, anchor = 'middle') => { const n = svg('text', { x: ax, y: ay, 'text-anchor': anchor }); n.textContent = t; root.append(n); };
  label('relative cost →', w / 2, h - 6);
  label('fidelity', 4, 10, 'start');
  label(`×${lo.toFixed(2)}`, pad, h - pad + 12);
  label(`×${hi.toFixed(2)}`, w - pad, h - pad + 12);
  plans.forEach((p, i) => {
    root.append(svg('circle', { cx: x(p.cost).toFixed(1), cy: y(p.fidelity).toFixed(1), r: 4 }));
    label(String(i + 1), x(p.cost) + 6, y(p.fidelity) - 5, 'start');
  });
  return root;
}

export function createPlans({ store, commit, plan, hook }) {
  // A constructed style sheet: the page's CSP (style-src 'self') refuses <style> elements.
  const sheet = new CSSStyleSheet();
  sheet.replaceSync(CSS);
  document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
  const box = $('plans-box');
  let budgetGpus = null; // the page's budget: GPUs of this kind (null: the scenario's own)
  let allowShorter = false;
  let asked = 0;

  async function refresh() {
    const { choices, result } = store.get();
    if (!choices || !result) return;
    const id = ++asked;
    const gpus = result.scenario.parallel?.gpus ?? 1;
    const train = result.scenario.mode !== 'inference';
    const request = {
      scenario: choices,
      budget: { max_gpus: Math.max(gpus, budgetGpus ?? gpus) },
      levers: train ? { seq_len: allowShorter } : { context: allowShorter },
      max_plans: 8,
    };
    const started = performance.now();
    const reply = await plan(request);
    if (id !== asked) return; // a newer scenario is being planned
    if (hook) hook.lastPlanMs = reply.ms ?? performance.now() - started;
    draw(reply.planned ?? reply, result, gpus, train);
  }

  function controls(gpus, train) {
    const n = el('input', { type: 'number', id: 'plan-gpus', min: 1, max: 4096, step: 1, value: budgetGpus ?? gpus, 'aria-label': 'GPUs of this kind at most' });
    n.addEventListener('change', () => { const v = Number(n.value); if (Number.isInteger(v) && v >= 1 && v <= 4096) { budgetGpus = v; refresh(); } });
    const c = el('input', { type: 'checkbox', id: 'plan-shorter' });
    c.checked = allowShorter;
    c.addEventListener('change', () => { allowShorter = c.checked; refresh(); });
    return el('div', { class: 'plan-controls' },
      el('label', {}, 'Up to ', n, ' GPUs of this kind'),
      el('label', {}, c, train ? ' allow a shorter sequence' : ' allow a shorter context'));
  }

  function draw(reply, result, gpus, train) {
    const g = result.gpu;
    const where = `${gpus}× ${g.name}`;
    if (!reply.ok) {
      box.replaceChildren(el('h3', { text: 'Plans' }), el('p', { class: 'muted', text: reply.errors?.[0]?.message ?? 'the planner failed' }));
      return;
    }
    const plans = reply.plans;
    const head = g.fits
      ? `Fits on ${where} with little headroom: ${plans.length} plan${plans.length === 1 ? '' : 's'} with more room or a cheaper step`
      : plans.length ? `Does not fit on ${where}: ${plans.length} plan${plans.length === 1 ? '' : 's'} that do` : `Does not fit on ${where}, and no plan within this budget fits`;
    const rows = plans.map((p, i) => {
      const apply = el('button', { type: 'button', class: 'plan-apply', text: 'Apply' });
      apply.addEventListener('click', () => commit(withChanges(store.get().choices, p.changes), { history: 'push' }));
      return el('tr', {},
        el('td', { class: 'num', text: String(i + 1) }),
        el('td', {}, el('div', { text: p.levers.join(' + ') }), el('div', { class: 'why muted', text: p.why })),
        el('td', { class: 'num', title: exactBytes(p.estimate.device_total_bytes), text: `${gib(p.estimate.device_total_bytes)} / ${gib(p.estimate.capacity_bytes)}` }),
        el('td', { class: 'num', title: 'GPU-time per token relative to your job (an estimate: docs/planner.md)', text: `×${p.cost.toFixed(2)}` }),
        el('td', { class: 'num', title: p.gave_up.length ? `gives up: ${p.gave_up.join(', ')}` : 'nothing given up', text: String(p.fidelity) }),
        el('td', {}, apply));
    });
    const parts = [el('h3', { id: 'plans-title', text: head }), controls(gpus, train)];
    if (plans.length) {
      parts.push(el('table', { id: 'plans-table' },
        el('thead', {}, el('tr', {}, ...['#', 'Change', 'Memory per GPU', 'Cost', 'Fidelity', ''].map((t) => el('th', { scope: 'col', text: t })))),
        el('tbody', {}, ...rows)));
      if (plans.length > 1) parts.push(pareto(plans));
    }
    const fewest = reply.fewest_gpus;
    if (fewest?.layout) {
      // "How many GPUs of this kind, with the cheapest parallel layout" (the core's fewest_gpus.layout).
      const l = fewest.layout;
      const apply = el('button', { type: 'button', id: 'fewest-apply', class: 'plan-apply', text: 'Apply' });
      apply.addEventListener('click', () => commit(withChanges(store.get().choices, l.changes), { history: 'push' }));
      const how = l.label.replace(/^\d+ GPUs?(, )?/, '');
      parts.push(el('p', { id: 'fewest-gpus', class: 'small' },
        el('span', { text: `Fits on ${l.gpus}× ${g.name}: ${how}, ${gib(l.estimate.device_total_bytes)} per GPU, cost ×${l.cost.toFixed(2)} per token (the fewest GPUs of this kind; the cheapest layout at that count). ` }),
        apply));
    } else if (fewest && (fewest.gpus > 0 || fewest.gpus_with_zero3 > 0)) {
      parts.push(el('p', { class: 'small', text: fewest.gpus > 0
        ? `As configured, it fits on ${fewest.gpus} GPUs of this kind.`
        : `With DeepSpeed ZeRO-3, it fits on ${fewest.gpus_with_zero3} GPUs of this kind.` }));
    }
    if (reply.other_gpus?.length) {
      parts.push(el('p', { class: 'small', text: `Fits unchanged on: ${reply.other_gpus.map((o) => `${o.name} (${gib(o.headroom_bytes)} headroom)`).join(', ')}.` }));
    }
    parts.push(el('p', { class: 'muted small', text: `Cost is an estimate of GPU-time per token relative to your job; fidelity is 100 minus what a plan gives up (docs/planner.md). ${reply.search.estimates} estimates.` }));
    box.replaceChildren(...parts);
  }

  return {
    // Shown for a result that does not fit or has less than 5% headroom.
    update() {
      box.hidden = false;
      box.replaceChildren(el('p', { class: 'muted', text: 'Looking for plans that fit…' }));
      refresh();
    },
    hide() { asked++; box.hidden = true; box.replaceChildren(); },
  };
}
