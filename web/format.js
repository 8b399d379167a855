// Number formatting shared by the page and the widget: GiB with one decimal everywhere, exact
// bytes (grouped digits) for title/hover text. Display only: no memory math.
export const GIB = 1024 ** 3;
const grouped = new Intl.NumberFormat('en-US');

export const gib = (bytes) => `${(bytes / GIB).toFixed(1)} GiB`;
export const gibNumber = (bytes) => (bytes / GIB).toFixed(1);
export const exactBytes = (bytes) => `${grouped.format(bytes)} bytes`;
export const int = (n) => grouped.format(n);
export const percent = (part, whole) => (whole > 0 ? `${((100 * part) / whole).toFixed(1)}%` : '–');
// gpu.band (docs/api.md, "Verdict"): the range of the device total, as the core gives it.
export const bandText = (b) => `low ${gib(b.low_bytes)}, expected ${gib(b.expected_bytes)}, high ${gib(b.high_bytes)}; ${b.basis}`;

// 8030261248 -> "8.03 B"
export function count(n) {
  if (n >= 1e12) return `${(n / 1e12).toFixed(2)} T`;
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)} B`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)} M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)} K`;
  return String(n);
}

export const TERM_LABELS = {
  weights: 'Weights', gradients: 'Gradients', optimizer_states: 'Optimizer states', activations: 'Activations',
  logits_and_loss: 'Logits & loss', kv_cache: 'KV cache', temporary: 'Temporary buffers', cuda_context: 'CUDA context',
  allocator_overhead: 'Allocator overhead', comm_buffers: 'NCCL buffers',
};
export const TERM_ORDER = Object.keys(TERM_LABELS);
export const termLabel = (key) => TERM_LABELS[key] ?? key.replace(/_/g, ' ');

// Breakdown entries in the core's fixed order, then any key the page does not know yet.
export function orderedTerms(breakdown = {}) {
  const keys = [...TERM_ORDER.filter((k) => k in breakdown), ...Object.keys(breakdown).filter((k) => !TERM_ORDER.includes(k))];
  return keys.map((k) => [k, breakdown[k]]);
}

// Creates an element with text content only (never HTML).
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'text') node.textContent = v;
    else if (k === 'class') node.className = v;
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) if (c !== null && c !== undefined) node.append(c);
  return node;
}

// The core's verdict (docs/api.md, "Verdict") as the badge's words and class.
export function verdictBadge(r) {
  const v = r.verdict ?? (r.gpu.fits ? 'fits' : 'does_not_fit');
  if (v === 'fits_queued') return { cls: 'queued', text: `Fits, ${int(r.inference.concurrent_sequences)} of ${int(r.scenario.inference.batch_size)} requests at once; the rest queue` };
  if (v === 'exceeds_model_context') return { cls: 'queued', text: `Fits in memory, but beyond the model's ${int(r.model.context_limit)}-token context` };
  return v === 'fits' ? { cls: 'fits', text: 'Fits' } : { cls: 'nofit', text: 'Does not fit' };
}
