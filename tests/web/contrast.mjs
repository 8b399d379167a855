// WCAG 2.x contrast of two #rgb / #rrggbb colours (shared by contrast.test.mjs and page.test.mjs).
import assert from 'node:assert/strict';

function rgb(hex) {
  const h = hex.replace('#', '');
  const full = h.length === 3 ? [...h].map((c) => c + c).join('') : h;
  assert.match(full, /^[0-9a-f]{6}$/i, `colour ${hex} is #rgb or #rrggbb`);
  return [0, 2, 4].map((i) => parseInt(full.slice(i, i + 2), 16));
}
// WCAG 2.x relative luminance and contrast ratio (https://www.w3.org/TR/WCAG21/#dfn-contrast-ratio).
function luminance(hex) {
  const [r, g, b] = rgb(hex).map((c) => { const s = c / 255; return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4; });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}
export function contrast(a, b) {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

