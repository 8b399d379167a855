// Loading a model from outside the preset list: a config.json pasted, dropped or chosen as a
// file, or fetched from the Hugging Face Hub. Loaded on first use (model-picker.js imports it when
// the user opens one of these boxes or drops something), so the page's first load does not carry it.
import { count, el } from './format.js';
import { DEFAULT_HUB, parseHubBase } from './hub.js';
import { CONFIG_MAX_BYTES, LimitError, clip, readTextCapped, utf8Length } from './limits.js';
import { showConfigStatus, refuseTooLarge } from './notices.js';

const $ = (id) => document.getElementById(id);

// useModel(config) applies a model and returns the core's answer; parse(text) is
// core.parseHfConfig off the main thread; hub() the link's ?hub= value.
export function createModelImport({ useModel, parse, hub }) {
  // Checks a config.json text (size, then the core in the worker), then uses it as the model.
  // Only the newest call shows its outcome. Resolves to true when the config is in use.
  let configSeq = 0;
  async function useConfigText(text, statusEl, source) {
    const seq = ++configSeq;
    const bytes = utf8Length(text);
    if (bytes > CONFIG_MAX_BYTES) return refuseTooLarge(statusEl, source, bytes);
    showConfigStatus(statusEl, null, `${source}: checking…`);
    const parsed = await parse(text);
    if (seq !== configSeq) return false;
    if (!parsed?.ok) {
      showConfigStatus(statusEl, 'bad', `${source}: this config.json was not accepted:`, parsed?.errors ?? []);
      return false;
    }
    let config;
    try { config = JSON.parse(text); } catch { config = null; }
    if (!config || typeof config !== 'object' || Array.isArray(config)) {
      showConfigStatus(statusEl, 'bad', `${source}: this config.json was not accepted: it is not a JSON object.`);
      return false;
    }
    const r = useModel(config);
    if (!r.ok) {
      showConfigStatus(statusEl, 'bad', `${source}: this config.json was not accepted:`, r.errors ?? []);
      return false;
    }
    showConfigStatus(statusEl, 'good', `${source}: loaded ${clip(parsed.model?.name || 'model', 100)} (${count(parsed.params?.total ?? 0)} parameters).`);
    for (const w of parsed.warnings ?? []) statusEl.append(el('div', { class: 'warn-line', text: clip(`${w.field_path ? `${w.field_path}: ` : ''}${w.message}`, 1000) }));
    return true;
  }

  // A file (chosen or dropped): its size is checked before a byte of it is read.
  async function useConfigFile(file, statusEl) {
    const name = clip(file.name || 'file', 100);
    if (file.size > CONFIG_MAX_BYTES) return refuseTooLarge(statusEl, name, file.size);
    let text;
    try { text = await readTextCapped(file.stream()); } catch (e) {
      if (e instanceof LimitError) return refuseTooLarge(statusEl, name, CONFIG_MAX_BYTES, { atLeast: true });
      showConfigStatus(statusEl, 'bad', `${name}: could not be read (${clip(e?.message ?? e)}).`);
      return false;
    }
    $('cfg-text').value = text;
    return useConfigText(text, statusEl, name);
  }

  function hubBase() {
    const h = parseHubBase(hub());
    return h.ok ? h.base : DEFAULT_HUB;
  }

  async function loadFromHub() {
    const status = $('hub-status');
    const id = $('hub-id').value.trim();
    status.classList.remove('bad', 'good');
    const bad = (text) => { status.classList.add('bad'); status.textContent = text; status.dataset.state = 'bad'; };
    if (id.length > 200 || !/^[A-Za-z0-9][\w.-]*(\/[\w.-]+)?$/.test(id) || id.includes('..')) {
      bad('Enter a model id like "Qwen/Qwen2.5-7B" (letters, digits, "-", "_", "." and one "/").');
      return;
    }
    const url = `${hubBase()}/${id}/resolve/main/config.json`;
    status.textContent = `Loading ${id} from the Hub…`;
    $('hub-load').disabled = true;
    try {
      let res;
      try {
        res = await fetch(url, { credentials: 'omit', cache: 'no-cache', redirect: 'follow' });
      } catch {
        bad(navigator.onLine === false
          ? 'You are offline: the Hub cannot be reached. Paste the config.json instead.'
          : `Could not reach the Hub (${new URL(url).origin}): network error or blocked. Paste the config.json instead.`);
        return;
      }
      if (res.status === 401 || res.status === 403) {
        bad(`${id} is gated or private (HTTP ${res.status}): the Hub only serves it after you accept its license while logged in. Download its config.json on huggingface.co and paste it below.`);
        return;
      }
      if (res.status === 404) { bad(`${id} was not found on the Hub (HTTP 404): check the spelling, or the repository has no config.json.`); return; }
      if (!res.ok) { bad(`The Hub answered HTTP ${res.status} for ${id}; try again later or paste the config.json.`); return; }
      const declared = Number(res.headers.get('content-length'));
      if (declared > CONFIG_MAX_BYTES) { res.body?.cancel().catch(() => {}); refuseTooLarge(status, `Hub ${id}`, declared); return; }
      let text;
      try { text = res.body ? await readTextCapped(res.body) : ''; } catch (e) {
        if (e instanceof LimitError) { refuseTooLarge(status, `Hub ${id}`, CONFIG_MAX_BYTES, { atLeast: true }); return; }
        bad(`The download of ${id} from the Hub broke off; try again or paste the config.json.`);
        return;
      }
      $('cfg-text').value = text;
      await useConfigText(text, status, `Hub ${id}`);
    } finally {
      $('hub-load').disabled = false;
      if (status.dataset.state === 'busy') status.dataset.state = 'done';
    }
  }

  return { useConfigText, useConfigFile, loadFromHub };
}
