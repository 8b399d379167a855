// What the page accepts from links, pastes, files and the Hub (docs/web.md, "Limits"). Every
// limit is checked on a length before the text is parsed, so a refusal costs no parsing, and is
// shown to the user with the size found and the size allowed (never a silent drop).

// An inline config.json: pasted, dropped, chosen as a file, fetched from the Hub, or inflated
// from a cfg= link. Hugging Face config.json files of language models are a few KB; the biggest
// carry long per-layer or per-module lists (quantization ignore lists, block configs) and stay
// in the tens of KB. The core is stateless, so every recompute (every keystroke) sends the whole
// scenario, config included, to the core on the main thread: at 128 KiB that costs at most about
// two frames even for the worst-shaped JSON, at 256 KiB three or more (docs/web.md, "Limits").
export const CONFIG_MAX_BYTES = 128 * 1024;

// The cfg= value (base64url of deflate-raw). Checked before decoding: a config under
// CONFIG_MAX_BYTES deflates to less than itself plus deflate's stored-block overhead
// (5 bytes per 64 KiB), and base64 adds a third, so 4/3 * CONFIG_MAX_BYTES + 1 KiB covers every
// config the page would accept; anything longer cannot be one.
export const CFG_PARAM_MAX_CHARS = Math.ceil((CONFIG_MAX_BYTES * 4) / 3) + 1024;

// Every other link key and value (model ids, GPU names, numbers, lists). Hub model ids are at
// most 96 characters per part; the longest schema field path is far below this.
export const LINK_VALUE_MAX_CHARS = 1000;

// User text quoted back in notices and errors is cut to this many characters.
export const SHOWN_TEXT_MAX_CHARS = 200;

export class LimitError extends Error {}

// 131072 -> "128 KiB", 52428800 -> "50.0 MiB", 900 -> "900 bytes".
export function sizeText(bytes) {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KiB`;
  return `${bytes} bytes`;
}

export function clip(text, max = SHOWN_TEXT_MAX_CHARS) {
  const s = String(text);
  return s.length <= max ? s : `${s.slice(0, max)}… (${s.length.toLocaleString('en-US')} characters)`;
}

// UTF-8 length of a string without encoding it when the answer is obvious.
export function utf8Length(text) {
  if (text.length > CONFIG_MAX_BYTES) return text.length; // at least this many bytes: over the cap anyway
  return new TextEncoder().encode(text).length;
}

export function tooLargeMessage(bytes, { atLeast = false } = {}) {
  const found = sizeText(bytes) === sizeText(CONFIG_MAX_BYTES) && bytes !== CONFIG_MAX_BYTES
    ? `${bytes.toLocaleString('en-US')} bytes` : sizeText(bytes);
  return `too large (${atLeast ? 'more than ' : ''}${found}; this page accepts a config.json of at most ${sizeText(CONFIG_MAX_BYTES)}, and real ones are a few KB)`;
}

// Reads a byte stream (a fetch body, Blob.stream(), a DecompressionStream's output) into text,
// stopping as soon as more than maxBytes arrived: throws LimitError then, having read at most
// maxBytes plus one chunk.
export async function readTextCapped(stream, maxBytes = CONFIG_MAX_BYTES) {
  const reader = stream.getReader();
  const chunks = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.length;
      if (total > maxBytes) throw new LimitError(tooLargeMessage(maxBytes, { atLeast: true }));
      chunks.push(value);
    }
  } catch (e) {
    reader.cancel().catch(() => {});
    throw e;
  }
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) { bytes.set(c, at); at += c.length; }
  return new TextDecoder().decode(bytes);
}
