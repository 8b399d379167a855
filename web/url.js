// URL sync: the user's choices (and the page keys hub, ladder, embed) in the address bar, and a
// link read back into choices. The link format itself is state.js's.
import { DEFAULT_MODEL } from './fields.js';
import { DEFAULT_HUB, parseHubBase } from './hub.js';
import { clip } from './limits.js';
import { encodeScenario, decodeScenario, dropPath } from './state.js';

export function createUrlSync() {
  let chain = Promise.resolve();
  return {
    // Resolves when every URL write asked for so far is done.
    settled: () => chain,
    // mode: 'push' | 'replace'. Writes are queued, so they land in the order they were asked for.
    write(choices, page, mode) {
      if (!choices) return;
      const extra = { hub: page.hub, ladder: page.ladder, embed: page.embed };
      chain = chain.then(async () => {
        const query = await encodeScenario(choices, null, extra);
        const url = `${location.pathname}?${query}`;
        if (url === `${location.pathname}${location.search}`) return;
        if (mode === 'push') history.pushState(null, '', url);
        else history.replaceState(null, '', url);
      }).catch((e) => console.warn('url update failed', e));
    },
  };
}

// A link -> {choices, result (the core's answer for them), page keys, notes}. Values the core
// rejects are noted and dropped, so that a bad link still shows an estimate. estimate(scenario)
// may return a promise (the page's waits for vramplan-full when the link's family needs it).
export async function readLink(search, schema, estimate) {
  const decoded = await decodeScenario(search, schema);
  let { scenario } = decoded;
  const { page, problems } = decoded;
  const notes = [...problems];
  const hub = parseHubBase(page.hub);
  if (!hub.ok) {
    notes.push({ field_path: 'hub', message: `"${clip(page.hub, 100)}" is ${hub.message}; using ${DEFAULT_HUB}` });
    delete page.hub;
  }
  if (scenario.model === undefined) scenario.model = DEFAULT_MODEL;
  let r = await estimate(scenario);
  for (let tries = 0; !r.ok && tries < 30; tries++) {
    let changed = false;
    for (const e of r.errors) {
      notes.push({ field_path: e.field_path, message: `${e.message} (ignored)` });
      if ((e.field_path || '').startsWith('model')) { changed = scenario.model !== DEFAULT_MODEL || changed; scenario.model = DEFAULT_MODEL; }
      else changed = dropPath(scenario, e.field_path) || changed;
    }
    if (!changed) break;
    r = await estimate(scenario);
  }
  if (!r.ok) {
    notes.push({ field_path: '', message: 'the link could not be read; showing the default scenario' });
    scenario = { model: DEFAULT_MODEL };
    r = await estimate(scenario);
  }
  return { choices: scenario, result: r, page, notes };
}
