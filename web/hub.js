// Which Hugging Face Hub a link may point the page at (?hub=). The value must be exactly one of
// the allowed https origins (an optional trailing "/" aside): it is parsed with the URL parser
// and compared as an origin, and its text must be that origin's canonical spelling, so that
// backslashes, "//", "@", credentials, ports, paths, queries, fragments, other schemes, upper
// case and whitespace are all refused rather than interpreted.
//
// Allowed: huggingface.co (the Hub) and hf-mirror.com (the public mirror used where
// huggingface.co is unreachable). index.html's CSP connect-src lists the same origins
// (tests/web/hub.test.mjs checks that the two lists agree).

export const DEFAULT_HUB = 'https://huggingface.co';
export const HUB_ORIGINS = Object.freeze(['https://huggingface.co', 'https://hf-mirror.com']);

// -> {ok: true, base} (base has no trailing slash) or {ok: false, message}.
export function parseHubBase(text) {
  if (text === undefined || text === null || text === '') return { ok: true, base: DEFAULT_HUB };
  const refuse = { ok: false, message: `not an allowed Hub; allowed: ${HUB_ORIGINS.join(', ')}` };
  if (typeof text !== 'string' || text.length > 100) return refuse;
  let url;
  try { url = new URL(text); } catch { return refuse; }
  if (url.protocol !== 'https:' || url.username || url.password || url.port || url.search || url.hash || url.pathname !== '/') return refuse;
  if (!HUB_ORIGINS.includes(url.origin)) return refuse;
  if (text !== url.origin && text !== `${url.origin}/`) return refuse;
  return { ok: true, base: url.origin };
}
