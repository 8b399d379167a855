// Input-to-render of the calculator page in headless Chromium over 50 edits (docs/web.md,
// "Speed"). For each edit (Playwright fill/select on a form control, a real input event), the time
// from the event's timeStamp to the end of the page's synchronous render (the DOM updated: the
// page bumps window.__vramplan.renders when it is done), and to the next frame after it
// (requestAnimationFrame + a task: style, layout and paint included); and the part spent from the
// event's dispatch to the page (a capture listener) to the end of the render. Measured from outside the
// page's code (a capture listener and a setter installed before the page loads), so any version of
// the page can be measured the same way.
//
//   node bench/page_speed.mjs [--site build-wasm/site] [--edits 50] [--json]
//
// Needs the built site (build-wasm/site) and Chromium (VRAMPLAN_CHROMIUM, default /usr/bin/chromium).
import { parseArgs } from 'node:util';

const { values: opt } = parseArgs({ options: { site: { type: 'string' }, edits: { type: 'string', default: '50' }, json: { type: 'boolean', default: false } } });
if (opt.site) process.env.VRAMPLAN_SITE = opt.site;
const { startServer, startBrowser, openPage } = await import('../tests/web/harness.mjs');

const EDITS = [
  (p, i) => p.fill('#f-train-seq_len', String([1024, 2048, 4096, 8192, 3072][i % 5])),
  (p, i) => p.fill('#f-train-micro_batch_size', String([1, 2, 4, 8][i % 4])),
  (p, i) => p.fill('#f-train-lora-rank', String([8, 16, 32, 64][i % 4])),
  (p, i) => p.selectOption('#f-train-gradient_checkpointing', ['true', 'false'][i % 2]),
  (p, i) => p.selectOption('#f-train-optimizer', ['adamw', 'adamw_8bit', 'lion'][i % 3]),
  (p, i) => p.fill('#f-train-grad_accum_steps', String([1, 4, 8][i % 3])),
  (p, i) => p.selectOption('#gpu', ['rtx-4090-24gb', 'a100-sxm-80gb', 'h100-sxm-80gb'][i % 3]),
  (p, i) => p.selectOption('#f-train-attention', ['sdpa', 'eager', 'flash'][i % 3]),
];

function percentile(sorted, q) { return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]; }
function stats(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return { n: s.length, min: s[0], median: percentile(s, 0.5), p95: percentile(s, 0.95), max: s.at(-1) };
}

const server = await startServer();
const chrome = await startBrowser();
try {
  const { page, context, problems } = await openPage(chrome.browser, null);
  await page.addInitScript(() => {
    const m = { input: null, dispatched: null, render: [], handler: [], frame: [] };
    window.__speed = m;
    const mark = (e) => { if (m.input === null) { m.input = e.timeStamp; m.dispatched = performance.now(); } };
    // input only: a number box also fires change when it loses focus, i.e. at the start of the
    // next edit, which would date that edit too early.
    window.addEventListener('input', mark, true);
    let hook;
    Object.defineProperty(window, '__vramplan', {
      configurable: true,
      get: () => hook,
      set(h) {
        hook = h;
        let renders = h.renders;
        Object.defineProperty(h, 'renders', {
          get: () => renders,
          set(v) {
            renders = v;
            if (m.input === null) return;
            const t0 = m.input;
            m.input = null;
            m.render.push(performance.now() - t0);
            m.handler.push(performance.now() - m.dispatched);
            requestAnimationFrame(() => setTimeout(() => m.frame.push(performance.now() - t0), 0));
          },
        });
      },
    });
  });
  await page.goto(`${server.base}/?v=1&model=meta-llama/Llama-3.1-8B&train.method=lora`);
  await page.waitForFunction(() => window.__vramplan?.ready === true, null, { timeout: 30000 });
  await page.waitForFunction(() => window.__vramplan.lastMatrixMs !== null, null, { timeout: 30000 });
  await page.evaluate(() => { for (const k of ['render', 'handler', 'frame']) window.__speed[k].length = 0; window.__speed.input = null; });
  const n = Number(opt.edits);
  let done = 0;
  for (let i = 0; done < n; i++) {
    const edit = EDITS[i % EDITS.length];
    const before = await page.evaluate(() => window.__speed.render.length);
    await edit(page, Math.floor(i / EDITS.length));
    const changed = await page.waitForFunction((b) => window.__speed.render.length > b, before, { timeout: 5000 }).then(() => true, () => false);
    await page.evaluate(() => { window.__speed.input = null; }); // an edit that changed nothing leaves no mark behind
    if (changed) done++;
    await page.waitForTimeout(60); // a person edits a few times a second, not back to back
  }
  await page.waitForFunction((k) => window.__speed.frame.length >= k, n);
  const m = await page.evaluate(() => window.__speed);
  const out = { site: opt.site ?? 'build-wasm/site', edits: n, render_ms: stats(m.render.slice(0, n)), handler_ms: stats(m.handler.slice(0, n)), frame_ms: stats(m.frame.slice(0, n)), problems };
  if (opt.json) console.log(JSON.stringify(out));
  else {
    const f = (s) => `min ${s.min.toFixed(1)} / median ${s.median.toFixed(1)} / p95 ${s.p95.toFixed(1)} / max ${s.max.toFixed(1)} ms`;
    console.log(`input-to-render over ${n} edits (${out.site}): ${f(out.render_ms)}`);
    console.log(`  of which the page's handler:      ${f(out.handler_ms)}`);
    console.log(`input-to-next-frame:              ${f(out.frame_ms)}`);
    if (problems.length) console.log(`page problems: ${problems.join('; ')}`);
  }
  await context.close();
} finally {
  await chrome.close();
  await server.close();
}
