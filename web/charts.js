// Hand-written SVG charts: the stacked breakdown bar and the allocated-memory timeline.
// Every number drawn comes from the core's result; this file only scales bytes to pixels.
import { gib, exactBytes, termLabel, orderedTerms, percent, bandText } from './format.js';

const NS = 'http://www.w3.org/2000/svg';

function svg(tag, attrs = {}, text) {
  const node = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

const titled = (node, text) => { node.append(svg('title', {}, text)); return node; };

// Horizontal stacked bar of the per-GPU breakdown, scaled to max(total, capacity, band's high
// end), with the band (gpu.band) as a whisker and a marker at the GPU's capacity.
export function stackedBar(gpu, width) {
  const h = 34;
  const w = Math.max(200, width);
  const total = gpu.device_total_bytes || 0;
  const cap = gpu.capacity_bytes || 0;
  const band = gpu.band;
  const scale = Math.max(total, cap, band?.high_bytes || 0, 1);
  const top = 4;
  const root = svg('svg', { viewBox: `0 ${-top} ${w} ${h + 16 + top}`, width: w, height: h + 16 + top, role: 'img', class: 'stacked' });
  root.append(svg('title', {}, `Per-GPU memory: ${gib(total)} of ${gib(cap)}${band ? `; range: ${bandText(band)}` : ''}`));
  root.append(svg('rect', { x: 0, y: 0, width: w, height: h, class: 'bar-bg', rx: 4 }));
  let x = 0;
  for (const [key, bytes] of orderedTerms(gpu.breakdown)) {
    if (!(bytes > 0)) continue;
    const segW = (bytes / scale) * w;
    root.append(titled(svg('rect', { x: x.toFixed(2), y: 0, width: Math.max(segW, 0.5).toFixed(2), height: h, class: `seg t-${key}` }),
      `${termLabel(key)}: ${gib(bytes)} (${percent(bytes, total)}) — ${exactBytes(bytes)}`));
    x += segW;
  }
  if (band) {
    // Whisker low..high at mid-height, a tick at the expected total; a halo keeps it legible.
    const [l, e, u] = [band.low_bytes, band.expected_bytes, band.high_bytes].map((b) => Math.min(w - 1.5, (b / scale) * w).toFixed(2));
    const d = `M${l} 17H${u}M${l} 9v16M${u} 9v16M${e} 12v10`;
    root.append(titled(svg('g', { class: `whisker ${band.verdict}` }), `Range of the estimate: ${bandText(band)}`));
    for (const c of ['whisker-halo', 'whisker-line']) root.lastChild.append(svg('path', { d, class: c }));
  }
  if (cap > 0) {
    const cx = Math.min(w - 1, (cap / scale) * w);
    root.append(titled(svg('line', { x1: cx, x2: cx, y1: -top, y2: h + 4, class: 'cap-line' }), `GPU capacity: ${gib(cap)} — ${exactBytes(cap)}`));
    const anchor = cx > w - 60 ? 'end' : 'start';
    root.append(svg('text', { x: anchor === 'end' ? cx - 3 : cx + 3, y: h + 14, class: 'cap-label', 'text-anchor': anchor }, `capacity ${gib(cap)}`));
  }
  return root;
}

// Area chart of timeline[].allocated_bytes over the step, phases shaded, peak marked.
export function timelineChart(timeline, width, { capacity } = {}) {
  const w = Math.max(280, width);
  const h = 220;
  const pad = { l: 52, r: 10, t: 22, b: 24 };
  const root = svg('svg', { viewBox: `0 0 ${w} ${h}`, width: w, height: h, role: 'img', class: 'timeline' });
  const n = timeline.length;
  let peakI = 0;
  for (let i = 1; i < n; i++) if (timeline[i].allocated_bytes > timeline[peakI].allocated_bytes) peakI = i;
  const peak = timeline[peakI].allocated_bytes;
  root.append(svg('title', {}, `Allocated memory over one training/serving step; peak ${gib(peak)} at ${timeline[peakI].phase} ${timeline[peakI].step}`));
  const top = Math.max(peak, 1);
  const pw = w - pad.l - pad.r;
  const ph = h - pad.t - pad.b;
  const X = (i) => pad.l + (n === 1 ? pw / 2 : (i * pw) / (n - 1));
  const Y = (b) => pad.t + ph - (b / top) * ph;
  const half = pw / Math.max(n - 1, 1) / 2;

  // Phase bands with labels.
  let start = 0;
  let band = 0;
  for (let i = 1; i <= n; i++) {
    if (i < n && timeline[i].phase === timeline[start].phase) continue;
    const x0 = Math.max(pad.l, X(start) - half);
    const x1 = Math.min(w - pad.r, X(i - 1) + half);
    root.append(svg('rect', { x: x0.toFixed(1), y: pad.t, width: Math.max(0.5, x1 - x0).toFixed(1), height: ph, class: `band b${band % 2}` }));
    if (x1 - x0 > 7 * timeline[start].phase.length) {
      root.append(svg('text', { x: ((x0 + x1) / 2).toFixed(1), y: pad.t - 6, 'text-anchor': 'middle', class: 'phase-label' }, timeline[start].phase.replace(/_/g, ' ')));
    }
    band++;
    start = i;
  }
  // Axis: 0, half, peak.
  for (const frac of [0, 0.5, 1]) {
    const y = Y(top * frac);
    root.append(svg('line', { x1: pad.l, x2: w - pad.r, y1: y, y2: y, class: 'grid' }));
    root.append(svg('text', { x: pad.l - 4, y: y + 4, 'text-anchor': 'end', class: 'axis-label' }, gib(top * frac).replace(' GiB', '')));
  }
  root.append(svg('text', { x: 4, y: pad.t + ph / 2, class: 'axis-label', transform: `rotate(-90 10 ${pad.t + ph / 2})`, 'text-anchor': 'middle' }, 'GiB'));
  root.append(svg('text', { x: pad.l + pw / 2, y: h - 6, class: 'axis-label', 'text-anchor': 'middle' }, `step (${n} points)`));

  // Area + line.
  let d = '';
  for (let i = 0; i < n; i++) d += `${i ? 'L' : 'M'}${X(i).toFixed(1)},${Y(timeline[i].allocated_bytes).toFixed(1)}`;
  root.append(svg('path', { d: `${d}L${X(n - 1).toFixed(1)},${Y(0)}L${X(0).toFixed(1)},${Y(0)}Z`, class: 'area' }));
  root.append(svg('path', { d, class: 'line' }));
  if (capacity && capacity <= top) {
    root.append(titled(svg('line', { x1: pad.l, x2: w - pad.r, y1: Y(capacity), y2: Y(capacity), class: 'cap-line' }), `GPU capacity ${gib(capacity)}`));
    root.append(svg('text', { x: w - pad.r - 2, y: Y(capacity) + 13, 'text-anchor': 'end', class: 'cap-label' }, `capacity ${gib(capacity)}`));
  }

  // Hover targets (one per point; thinned for very long timelines).
  const stride = Math.ceil(n / 600);
  for (let i = 0; i < n; i += stride) {
    const p = timeline[i];
    root.append(titled(svg('rect', { x: (X(i) - Math.max(half, 1)).toFixed(1), y: pad.t, width: (Math.max(half, 1) * 2 * stride).toFixed(1), height: ph, class: 'hit' }),
      `${p.phase} · ${p.step}: ${gib(p.allocated_bytes)} (${exactBytes(p.allocated_bytes)})`));
  }

  // Peak marker.
  const px = X(peakI);
  const py = Y(peak);
  root.append(titled(svg('circle', { cx: px, cy: py, r: 4.5, class: 'peak' }), `peak: ${gib(peak)} — ${exactBytes(peak)}`));
  const anchor = px > w - 140 ? 'end' : px < pad.l + 140 ? 'start' : 'middle';
  root.append(svg('text', { x: px + (anchor === 'start' ? 6 : anchor === 'end' ? -6 : 0), y: py - 8 < pad.t + 12 ? py + 18 : py - 8, 'text-anchor': anchor, class: 'peak-label' },
    `peak ${gib(peak)} · ${timeline[peakI].step || timeline[peakI].phase}`));
  return root;
}

// The charts view of the page: the stacked bar (#bar) and the timeline (#timeline) of a result,
// redrawn when the result changes or a chart's box changes width. The widths come from a
// ResizeObserver, so drawing a new result never forces a synchronous layout. getResult: the
// store's current result.
export function createChartsView(getResult) {
  const boxes = [document.getElementById('bar'), document.getElementById('timeline')];
  const widths = new Map(); // box -> content width (px) last reported by the observer
  const width = (node) => widths.get(node) || Math.floor(node.clientWidth || 600);
  function render(r) {
    const [bar, timeline] = boxes;
    bar.replaceChildren(stackedBar(r.gpu, width(bar)));
    if (!r.timeline?.length) {
      const p = document.createElement('p');
      p.className = 'muted';
      p.textContent = 'The core returned no timeline for this scenario.';
      timeline.replaceChildren(p);
    } else {
      timeline.replaceChildren(timelineChart(r.timeline, width(timeline), { capacity: r.gpu.capacity_bytes }));
    }
  }
  let frame = 0;
  const observer = new ResizeObserver((entries) => {
    let changed = false;
    for (const e of entries) {
      const w = Math.floor(e.contentRect.width);
      if (w > 0 && w !== widths.get(e.target)) { widths.set(e.target, w); changed = true; }
    }
    if (!changed || !getResult()) return;
    cancelAnimationFrame(frame);
    frame = requestAnimationFrame(() => render(getResult()));
  });
  for (const b of boxes) observer.observe(b);
  return { render };
}
