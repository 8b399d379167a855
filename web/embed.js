// <vramplan-estimate>: a compact, live GPU-memory estimate for any page (docs/embed.md).
//
//   <script type="module" src="https://HOST/vramplan/embed.js"></script>
//   <vramplan-estimate model="meta-llama/Llama-3.1-8B" method="lora" seq-len="2048" gpu="rtx-4090-24gb"></vramplan-estimate>
//
// Loads the WASM core from the same directory as this file, recomputes whenever an attribute
// changes, and links to the full calculator with the same scenario. Renders into a shadow root
// with text only (attribute values are never parsed as HTML).
import { loadCore, needsFullReader } from './core.js';
import { encodeScenario, convert } from './state.js';
import { DEFAULT_MODEL, schemaNode, setPath } from './fields.js';
import { gib, exactBytes, orderedTerms, termLabel, percent, count, el, TERM_ORDER, verdictBadge, bandText } from './format.js';
import { stackedBar } from './charts.js';
import { clip } from './limits.js';

// Attribute -> scenario path. Any other scenario field can be given with the `scenario` attribute
// (a JSON object); the attributes below override it.
export const ATTRIBUTES = {
  model: 'model', mode: 'mode', gpu: 'gpu',
  method: 'train.method', precision: 'train.precision', optimizer: 'train.optimizer',
  'micro-batch-size': 'train.micro_batch_size', 'seq-len': 'train.seq_len', 'grad-accum-steps': 'train.grad_accum_steps',
  'gradient-checkpointing': 'train.gradient_checkpointing', attention: 'train.attention', loss: 'train.loss',
  'lora-rank': 'train.lora.rank', 'lora-targets': 'train.lora.targets', 'qlora-bits': 'train.qlora_bits',
  'batch-size': 'inference.batch_size', 'prompt-len': 'inference.prompt_len', 'new-tokens': 'inference.new_tokens',
  weights: 'inference.weights', 'kv-cache': 'inference.kv_cache', engine: 'inference.engine',
  gpus: 'parallel.gpus', tp: 'parallel.tp', pp: 'parallel.pp', zero: 'parallel.zero', fsdp: 'parallel.fsdp',
};

const APP_URL = new URL('./index.html', import.meta.url);

const CSS = `
:host { display: block; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1b1d22;
  --bg: #fff; --line: #d9dce3; --muted: #5c6370; --ok: #147536; --ok-bg: #e3f5e8; --bad: #b42318; --bad-bg: #fde8e6; --band0: #f1f3f7;
  --c-weights: #3b6fd8; --c-gradients: #d8893b; --c-optimizer_states: #c0463c; --c-activations: #3aa57a; --c-logits_and_loss: #8f5bd1;
  --c-kv_cache: #1ea0b7; --c-temporary: #c7a128; --c-cuda_context: #7b8394; --c-allocator_overhead: #b6bcc8; --c-comm_buffers: #8e7cc3; }
@media (prefers-color-scheme: dark) { :host { color: #e6e8ee; --bg: #181b22; --line: #2c313b; --muted: #9aa3b2; --ok: #5fd38a; --ok-bg: #12301e;
  --bad: #ff8b7e; --bad-bg: #3a1714; --band0: #1c2029; --c-allocator_overhead: #5b6272; } }
.card { border: 1px solid var(--line); border-radius: 10px; padding: .7rem .9rem; background: var(--bg); max-width: 34rem; }
.head { display: flex; flex-wrap: wrap; gap: .3rem .6rem; align-items: baseline; }
.badge { font-weight: 700; padding: 0 .5rem; border-radius: 99px; }
.fits .badge { background: var(--ok-bg); color: var(--ok); } .nofit .badge { background: var(--bad-bg); color: var(--bad); } .queued .badge { background: #fff4d6; color: #8a5a00; }
.total { font-size: 1.3rem; font-weight: 700; }
.muted { color: var(--muted); font-size: .85rem; }
ul { list-style: none; margin: .4rem 0; padding: 0; display: grid; grid-template-columns: 1fr auto auto; gap: 0 .8rem; font-size: .85rem; }
li { display: contents; } .n { text-align: right; font-variant-numeric: tabular-nums; }
svg { display: block; width: 100%; height: auto; margin-top: .4rem; }
.bar-bg { fill: var(--band0); } .cap-line { stroke: currentColor; stroke-width: 2; stroke-dasharray: 4 3; } .cap-label { fill: var(--muted); font-size: 11px; }
.whisker path { fill: none; } .whisker-halo { stroke: var(--bg); stroke-width: 5; } .whisker-line { stroke: currentColor; stroke-width: 2; }
${TERM_ORDER.map((k) => `.t-${k} { fill: var(--c-${k}); }`).join('\n')}
.err { color: var(--bad); font-size: .85rem; }
a { color: inherit; font-size: .85rem; }
`;

let sheet;
function styles() {
  if (!sheet) { sheet = new CSSStyleSheet(); sheet.replaceSync(CSS); }
  return sheet;
}

export class VramplanEstimate extends HTMLElement {
  static get observedAttributes() { return ['scenario', ...Object.keys(ATTRIBUTES)]; }

  constructor() {
    super();
    this.attachShadow({ mode: 'open' }).adoptedStyleSheets = [styles()];
    this.shadowRoot.append(el('div', { class: 'card muted', text: 'Loading the estimate…' }));
    this.result = null;
    this._queued = false;
  }

  connectedCallback() { this._schedule(); }
  attributeChangedCallback() { this._schedule(); }

  _schedule() {
    if (this._queued || !this.isConnected) return;
    this._queued = true;
    queueMicrotask(() => { this._queued = false; this._update(); });
  }

  // The scenario the attributes describe (values typed by the core's schema).
  scenarioFrom(schema) {
    const problems = [];
    let s = {};
    const raw = this.getAttribute('scenario');
    if (raw) {
      try { s = JSON.parse(raw); } catch { problems.push({ field_path: 'scenario', message: 'the scenario attribute is not valid JSON' }); }
      if (typeof s !== 'object' || s === null || Array.isArray(s)) s = {};
    }
    for (const [attr, path] of Object.entries(ATTRIBUTES)) {
      const text = this.getAttribute(attr);
      if (text === null) continue;
      setPath(s, path, path === 'model' || path === 'gpu' ? text : convert(schemaNode(schema, path), text));
    }
    if (s.model === undefined) s.model = DEFAULT_MODEL;
    if (s.train?.method && s.mode === undefined) s.mode = 'train';
    return { s, problems };
  }

  // Every failure ends in a visible card: the module not loading, a core call throwing, or a
  // result the widget cannot draw. The "Loading" card never stays.
  async _update() {
    const seq = (this._seq = (this._seq ?? 0) + 1);
    try {
      const core = await loadCore().catch((e) => { throw new Error(`vramplan could not load (${e?.message ?? e})`); });
      if (seq !== this._seq) return; // a newer attribute change is on its way
      await this._render(core, seq);
    } catch (e) {
      this._fail(e);
    }
  }

  _fail(e) {
    const message = clip(e?.message ?? e, 500);
    this.result = { ok: false, errors: [{ code: 'internal', field_path: '', message }] };
    delete this.dataset.totalBytes;
    delete this.dataset.fits;
    delete this.dataset.band;
    this.shadowRoot.replaceChildren(el('div', { class: 'card err', part: 'card' },
      el('strong', { text: 'vramplan: no estimate' }), el('div', { text: message })));
    this.dispatchEvent(new CustomEvent('vramplan-estimate', { detail: this.result }));
  }

  async _render(core, seq) {
    let started = performance.now();
    const { s, problems } = this.scenarioFrom(core.schema());
    let r;
    try { r = core.estimate(s); } catch (e) { throw new Error(`the estimator failed: ${e?.message ?? e}`); }
    if (needsFullReader(r)) {
      // A family the page's module does not read: vramplan-full reads it (docs/web.md, "Readers on demand").
      await core.useFull().catch((e) => { throw new Error(`vramplan-full could not load (${e?.message ?? e})`); });
      if (seq !== this._seq) return;
      started = performance.now();
      try { r = core.estimate(s); } catch (e) { throw new Error(`the estimator failed: ${e?.message ?? e}`); }
    }
    if (!r || typeof r !== 'object' || (r.ok !== true && !Array.isArray(r.errors))) throw new Error('the estimator returned no result');
    this.result = r;
    const card = el('div', { class: 'card', part: 'card' });
    if (!r.ok || problems.length) {
      card.classList.add('err');
      card.append(el('strong', { text: 'vramplan: this scenario was not accepted' }));
      const ul = el('div');
      for (const e of [...problems, ...(r.errors ?? [])]) ul.append(el('div', { text: clip(`${e.field_path ? `${clip(e.field_path)}: ` : ''}${e.message}`, 1000) }));
      card.append(ul);
    }
    if (r.ok) {
      const g = r.gpu;
      const gpus = r.scenario.parallel?.gpus ?? 1;
      const badge = verdictBadge(r);
      card.classList.add(badge.cls);
      const what = r.scenario.mode === 'inference' ? `inference, ${r.scenario.inference.weights}` : r.scenario.train.method;
      card.append(
        el('div', { class: 'head' },
          el('span', { class: 'badge', text: badge.text }),
          el('span', { class: 'total', title: exactBytes(g.device_total_bytes), text: gib(g.device_total_bytes) }),
          el('span', { class: 'muted', text: `${gpus > 1 ? `per GPU (× ${gpus}) ` : ''}of ${gib(g.capacity_bytes)} on ${g.name}` })),
        el('div', { class: 'muted', text: `${r.model.name} (${count(r.params.total)} params) · ${what}` }),
        g.band?.verdict === 'tight' ? el('div', { class: 'muted tight-note', text: `Tight: the range (${bandText(g.band)}) straddles the capacity` }) : '',
        stackedBar(g, 480),
      );
      const top = orderedTerms(g.breakdown).filter(([, b]) => b > 0).sort((a, b) => b[1] - a[1]).slice(0, 4);
      const ul = el('ul');
      for (const [k, b] of top) ul.append(el('li', {}, el('span', { text: termLabel(k) }), el('span', { class: 'n', title: exactBytes(b), text: gib(b) }), el('span', { class: 'n muted', text: percent(b, g.device_total_bytes) })));
      card.append(ul);
      const link = el('a', { target: '_blank', rel: 'noopener', part: 'link', text: 'Open in vramplan →' });
      encodeScenario(s, null).then((q) => { link.href = `${APP_URL.href}?${q}`; }, () => { link.remove(); });
      card.append(link);
      this.dataset.totalBytes = String(g.device_total_bytes);
      this.dataset.fits = String(g.fits);
      this.dataset.band = g.band?.verdict ?? '';
    } else {
      delete this.dataset.totalBytes;
      delete this.dataset.fits;
      delete this.dataset.band;
    }
    this.shadowRoot.replaceChildren(card);
    this.lastRenderMs = performance.now() - started;
    this.dispatchEvent(new CustomEvent('vramplan-estimate', { detail: r }));
  }
}

if (!customElements.get('vramplan-estimate')) customElements.define('vramplan-estimate', VramplanEstimate);
