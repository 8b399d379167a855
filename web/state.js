// Scenario <-> URL query string (link format v=1).
//
//   ?v=1&model=meta-llama/Llama-3.1-8B&train.method=qlora&train.seq_len=2048&gpu=rtx-4090-24gb
//
// Keys are the scenario's own dotted field paths (the same paths the core names in errors), so a
// link is readable and any schema field round-trips. Only values that differ from the core's
// defaults are written. Arrays are comma-separated. An inline config.json travels as
// cfg=<base64url(deflate-raw(JSON))>. Non-scenario page state (hub, ladder, embed) passes through.
// Sizes are bounded before anything is decoded (limits.js): the cfg= text, its inflated size
// (the inflate is streamed and stopped at the cap) and every other value.

import { schemaNode, getPath, setPath } from './fields.js';
import { LINK_VALUE_MAX_CHARS, LimitError, clip } from './limits.js';

export const LINK_VERSION = 1;
export const PAGE_KEYS = new Set(['v', 'model', 'cfg', 'hub', 'ladder', 'embed']);

const isObj = (x) => x !== null && typeof x === 'object' && !Array.isArray(x);

function sameValue(a, b) { return JSON.stringify(a) === JSON.stringify(b); }

// Leaf paths of a scenario (arrays are leaves); the model and schema keys are handled separately.
function leaves(obj, prefix = '', out = []) {
  for (const [k, v] of Object.entries(obj)) {
    const p = prefix ? `${prefix}.${k}` : k;
    if (!prefix && (k === 'model' || k === 'schema')) continue;
    if (isObj(v)) leaves(v, p, out);
    else out.push([p, v]);
  }
  return out;
}

// Keeps '/', ':', ',' readable (they are legal in a query string).
function enc(s) { return encodeURIComponent(s).replace(/%2F/gi, '/').replace(/%3A/gi, ':').replace(/%2C/gi, ','); }

export function b64urlEncode(bytes) {
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export function b64urlDecode(s) {
  const b64 = s.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((s.length + 3) % 4);
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

// An inline config (scenario.model as an object) is never modified once read, so its JSON text
// is made once per object and spliced into the scenario's JSON: the page sends the scenario to
// the core on every change, and re-serializing a large config each time would cost time in
// proportion to its size.
const configText = new WeakMap();
export function configJson(obj) {
  let text = configText.get(obj);
  if (text === undefined) { text = JSON.stringify(obj); configText.set(obj, text); }
  return text;
}

// JSON.stringify(scenario), with a cached inline config. A string is passed through.
export function scenarioJson(scenario) {
  if (typeof scenario === 'string') return scenario;
  if (!isObj(scenario) || !isObj(scenario.model)) return JSON.stringify(scenario);
  const rest = JSON.stringify({ ...scenario, model: undefined });
  return `{"model":${configJson(scenario.model)}${rest === '{}' ? '' : `,${rest.slice(1, -1)}`}}`;
}

// The inline-config codec (deflate-raw + base64url, config-link.js) is loaded only when a link
// carries a config or a config is in use: most links name a preset.
const codec = () => import('./config-link.js');
export async function packConfig(obj) { return (await codec()).packConfig(obj); }
// s: the cfg= text -> the config object. Throws LimitError (too long / inflates past the cap) or
// any other error for a damaged value.
export async function unpackConfig(s, limits) { return (await codec()).unpackConfig(s, limits); }

// Records the JSON text a config object was parsed from (config-link.js), so that it is not
// serialized again.
export function keepConfigText(obj, text) { if (isObj(obj)) configText.set(obj, text); }

// scenario: the (normalized) scenario; defaults: the core's normalized scenario for the same model.
// extra: page keys to append ({hub, ladder, ...}); undefined/empty values are skipped.
export async function encodeScenario(scenario, defaults, extra = {}) {
  const parts = [`v=${LINK_VERSION}`];
  if (typeof scenario.model === 'string') parts.push(`model=${enc(scenario.model)}`);
  else if (isObj(scenario.model)) parts.push(`cfg=${await packConfig(scenario.model)}`);
  for (const [path, value] of leaves(scenario)) {
    if (defaults && sameValue(getPath(defaults, path), value)) continue;
    const text = Array.isArray(value) ? value.join(',') : String(value);
    parts.push(`${enc(path)}=${enc(text)}`);
  }
  // A custom GPU is an object; a catalogue GPU a string: both are leaves above, except the object.
  for (const [k, v] of Object.entries(extra)) if (v !== undefined && v !== null && v !== '') parts.push(`${k}=${enc(String(v))}`);
  return parts.join('&');
}

// Converts one URL text value to the JSON type the schema asks for. Unconvertible text is passed
// through unchanged so that the core names the field and the problem.
export function convert(node, text) {
  if (!node) return text;
  if (node.oneOf) {
    for (const alt of node.oneOf) {
      if (alt.const !== undefined && String(alt.const) === text) return alt.const;
    }
    for (const alt of node.oneOf) {
      if (alt.type === 'boolean' && (text === 'true' || text === 'false')) return text === 'true';
      if (alt.type === 'array') return text === '' ? [] : text.split(',');
    }
    return text;
  }
  if (node.enum) {
    const hit = node.enum.find((e) => String(e) === text);
    return hit === undefined ? text : hit;
  }
  switch (node.type) {
    case 'integer': case 'number': {
      const n = Number(text);
      return text.trim() !== '' && Number.isFinite(n) ? n : text;
    }
    case 'boolean':
      if (text === 'true' || text === '1') return true;
      if (text === 'false' || text === '0') return false;
      return text;
    case 'array': return text === '' ? [] : text.split(',').map((x) => convert(node.items, x));
    default: return text;
  }
}

// Returns {scenario, page, problems}: scenario is sparse (the core fills defaults); page holds the
// non-scenario keys; problems are human-readable notes about what was ignored.
export async function decodeScenario(search, schema) {
  const params = new URLSearchParams(search);
  const scenario = {};
  const page = {};
  const problems = [];
  const v = params.get('v');
  if (v !== null && v !== String(LINK_VERSION)) {
    problems.push({ field_path: 'v', message: `link version v=${v} is not supported by this page (v=${LINK_VERSION}); reading it as v=${LINK_VERSION}` });
  }
  for (const [key, text] of params) {
    if (key === 'cfg') {
      try { scenario.model = await unpackConfig(text); } catch (e) {
        problems.push({ field_path: 'cfg', message: e instanceof LimitError ? `${e.message}; it was ignored`
          : 'the inline config.json in the link is damaged (cannot be decompressed); it was ignored' });
      }
      continue;
    }
    if (key.length > LINK_VALUE_MAX_CHARS) {
      problems.push({ field_path: clip(key), message: `link parameter name of ${key.length.toLocaleString('en-US')} characters (at most ${LINK_VALUE_MAX_CHARS}); it was ignored` });
      continue;
    }
    if (text.length > LINK_VALUE_MAX_CHARS) {
      problems.push({ field_path: key, message: `the value is ${text.length.toLocaleString('en-US')} characters long (at most ${LINK_VALUE_MAX_CHARS}); it was ignored` });
      continue;
    }
    if (key === 'model') { scenario.model = text; continue; }
    if (PAGE_KEYS.has(key)) { page[key] = text; continue; }
    if (key === 'gpu.name' || key === 'gpu.memory_bytes') {
      if (!isObj(scenario.gpu)) scenario.gpu = {};
      scenario.gpu[key.slice(4)] = key === 'gpu.name' ? text : convert({ type: 'integer' }, text);
      continue;
    }
    const node = schemaNode(schema, key);
    if (!node || node.type === 'object') {
      problems.push({ field_path: clip(key), message: `unknown link parameter "${clip(key, 60)}"; it was ignored` });
      continue;
    }
    setPath(scenario, key, convert(node, text));
  }
  return { scenario, page, problems };
}

// Removes the value at a core error's field_path ("train.seq_len", "model", "gpu.memory_bytes")
// from a sparse scenario, so that a bad link still loads the rest. Returns false if nothing changed.
export function dropPath(scenario, fieldPath) {
  if (!fieldPath) return false;
  const keys = fieldPath.replace(/\[\d+\]/g, '').split('.');
  for (let n = keys.length; n >= 1; n--) {
    const path = keys.slice(0, n).join('.');
    if (getPath(scenario, path) !== undefined) { setPath(scenario, path, undefined); return true; }
  }
  return false;
}
