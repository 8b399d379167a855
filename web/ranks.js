// The per-rank table: one row per rank role (pipeline stages, ...) when a job's ranks differ, the
// worst one highlighted. Loaded by results.js the first time a result has more than one role, and
// styled here (CSSOM, which the CSP allows) rather than in style.css, so that the page's first
// download does not grow (docs/web.md, "Page weight"). Formatting only: every number is the core's.
import { gibNumber, exactBytes, int, el } from './format.js';

// The rank the core reports as gpu (its invariant gpu_is_worst_rank: the largest device total;
// docs/testing.md): the first rank whose device total is gpu's.
export function worstRankIndex(r) {
  const i = (r.ranks ?? []).findIndex((k) => k.device_total_bytes === r.gpu.device_total_bytes);
  return i >= 0 ? i : 0;
}

// A small bar of a device total against the capacity, scaled like the stacked bar (charts.js):
// max(total, capacity) spans the width, a tick marks the capacity.
function usageBar(total, cap, w = 60) {
  const NS = 'http://www.w3.org/2000/svg';
  const svg = (tag, attrs) => {
    const n = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, String(v));
    return n;
  };
  const h = 10;
  const scale = Math.max(total, cap, 1);
  const cx = Math.min(w - 1, (cap / scale) * w).toFixed(2);
  const used = svg('rect', { x: 0, y: 0, width: Math.max(0.5, (total / scale) * w).toFixed(2), height: h, rx: 2 });
  used.style.fill = total > cap ? 'var(--bad)' : 'var(--c-weights)';
  const root = svg('svg', { viewBox: `0 0 ${w} ${h}`, width: w, height: h, 'aria-hidden': 'true' });
  root.append(svg('rect', { x: 0, y: 0, width: w, height: h, rx: 2, class: 'bar-bg' }), used,
    svg('line', { x1: cx, x2: cx, y1: 0, y2: h, stroke: 'currentColor', 'stroke-width': 1.5 }));
  return root;
}

// Draws r's ranks into box (results.js hides it); nothing for a single role.
export function renderRanks(box, r) {
  if (!(r.ranks?.length > 1)) return;
  const cap = r.gpu.capacity_bytes;
  const worst = worstRankIndex(r);
  const rows = r.ranks.map((k, i) => {
    // The core's per-rank headroom when it gives one; else capacity - device total, the relation
    // it states for gpu (its invariant fits_matches_headroom).
    const headroom = typeof k.headroom_bytes === 'number' ? k.headroom_bytes : cap - k.device_total_bytes;
    const tr = el('tr', { class: i === worst ? 'worst' : undefined, 'data-role': k.role },
      el('th', { scope: 'row' }, k.role, i === worst ? el('span', { class: 'tag', text: 'worst' }) : null),
      el('td', { class: 'num', text: int(k.count) }),
      el('td', { class: 'num', title: exactBytes(k.device_total_bytes), text: gibNumber(k.device_total_bytes) }),
      el('td', { class: `num${headroom < 0 ? ' bad' : ''}`, title: exactBytes(Math.abs(headroom)), text: headroom < 0 ? `${gibNumber(-headroom)} short` : gibNumber(headroom) }),
      el('td', {}, usageBar(k.device_total_bytes, cap)));
    // The worst rank: bold, with a bar at its edge (not by colour alone).
    if (i === worst) {
      tr.style.fontWeight = '700';
      tr.cells[0].style.boxShadow = 'inset 3px 0 0 var(--accent)';
    }
    return tr;
  });
  const th = (text, num) => {
    const c = el('th', { scope: 'col', class: num ? 'num' : undefined, text });
    c.style.whiteSpace = 'normal'; // the headers wrap on narrow screens
    return c;
  };
  box.replaceChildren(el('table', { class: 'breakdown ranks', id: 'ranks' },
    el('caption', { text: 'Per rank (the numbers above are the worst rank\'s)' }),
    el('thead', {}, el('tr', {}, th('Rank'), th('GPUs', 1), th('Device total (GiB)', 1), th('Headroom (GiB)', 1), th('vs GPU'))),
    el('tbody', {}, ...rows)));
  box.hidden = false;
}
