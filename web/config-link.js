// The inline config.json of a link (cfg=): deflate-raw (CompressionStream) + base64url, with the
// inflate streamed and stopped at the page's size limit (limits.js). Loaded by state.js on demand.
import { CONFIG_MAX_BYTES, CFG_PARAM_MAX_CHARS, LimitError, readTextCapped, sizeText } from './limits.js';
import { b64urlEncode, b64urlDecode, configJson, keepConfigText } from './state.js';

async function pipe(bytes, stream) {
  const buf = await new Response(new Blob([bytes]).stream().pipeThrough(stream)).arrayBuffer();
  return new Uint8Array(buf);
}

// An inline config is packed once per object (the page re-writes the URL on every change).
const packed = new WeakMap();
export async function packConfig(obj) {
  if (packed.has(obj)) return packed.get(obj);
  const bytes = new TextEncoder().encode(configJson(obj));
  const text = b64urlEncode(await pipe(bytes, new CompressionStream('deflate-raw')));
  packed.set(obj, text);
  return text;
}

// The deflate input is fed in 1 KiB pieces: deflate expands at most 1032:1, so the inflate stops
// within about 1 MiB past the cap however the link was built (a 136 KB link can hold 100 MB).
const INFLATE_STEP_BYTES = 1024;

function inflateStream(bytes) {
  let at = 0;
  const source = new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) { controller.close(); return; }
      controller.enqueue(bytes.subarray(at, at + INFLATE_STEP_BYTES));
      at += INFLATE_STEP_BYTES;
    },
  }, { highWaterMark: 0 });
  return source.pipeThrough(new DecompressionStream('deflate-raw'));
}

// cfg= text -> the config object. Throws LimitError (too long / inflates past the cap) or any
// other error for a damaged value.
export async function unpackConfig(s, { maxChars = CFG_PARAM_MAX_CHARS, maxBytes = CONFIG_MAX_BYTES } = {}) {
  if (s.length > maxChars) {
    throw new LimitError(`the inline config.json in the link is too long (${s.length.toLocaleString('en-US')} characters; at most ${maxChars.toLocaleString('en-US')})`);
  }
  let text;
  try {
    text = await readTextCapped(inflateStream(b64urlDecode(s)), maxBytes);
  } catch (e) {
    if (e instanceof LimitError) {
      throw new LimitError(`the inline config.json in the link inflates to more than ${sizeText(maxBytes)} (the most this page accepts; a real config.json is a few KB)`);
    }
    throw e;
  }
  const config = JSON.parse(text);
  keepConfigText(config, text);
  return config;
}

