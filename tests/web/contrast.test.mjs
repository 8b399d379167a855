// Text contrast of the page in both themes, computed from web/style.css: every text colour /
// background pair the page draws reaches WCAG 2.x AA for normal text (>= 4.5:1). The colours are
// read from the stylesheet's custom properties (light :root, then the prefers-color-scheme: dark
// block over it); the pairs are every rule that sets both a text colour and a background from
// those properties, plus the pairs drawn across rules (text of one element on the background of
// its container), listed below.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './harness.mjs';
import { contrast } from './contrast.mjs';

const CSS = fs.readFileSync(path.join(ROOT, 'web/style.css'), 'utf8');

// Custom properties of the first `:root { ... }` block after `from` in the text.
function rootVars(text) {
  const m = /:root\s*\{([^}]*)\}/.exec(text);
  const vars = {};
  for (const [, k, v] of m[1].matchAll(/--([\w-]+)\s*:\s*([^;]+);/g)) vars[k] = v.trim();
  return vars;
}
const light = rootVars(CSS);
const darkAt = CSS.indexOf('@media (prefers-color-scheme: dark)');
const dark = { ...light, ...rootVars(CSS.slice(darkAt)) };

// Text on a container's background (the text's rule and the background's rule differ).
const ACROSS = [
  ['fg', 'bg'], ['fg', 'panel'], ['muted', 'bg'], ['muted', 'panel'], // body, panels, help text
  ['accent', 'bg'], ['accent', 'panel'],                             // links, summaries, link buttons
  ['bad', 'panel'], ['ok', 'panel'], ['warn', 'panel'],               // field errors, verdict line, warnings, config status
  ['fg', 'warn-bg'],                                                  // link notice
  ['muted', 'band0'], ['muted', 'band1'], ['fg', 'band0'], ['fg', 'band1'], // chart labels on phase bands, tags
];

// Rules that set a colour and a background themselves: `color: var(--x)` + `background: var(--y)`.
function samePairs() {
  const pairs = [];
  for (const [, body] of CSS.matchAll(/\{([^{}]*)\}/g)) {
    const fg = /(?:^|;|\s)color:\s*var\(--([\w-]+)\)/.exec(body);
    const bg = /background(?:-color)?:\s*var\(--([\w-]+)\)/.exec(body);
    if (fg && bg) pairs.push([fg[1], bg[1]]);
  }
  return pairs;
}

test('every text/background pair reaches 4.5:1 in both themes', () => {
  const pairs = [...ACROSS, ...samePairs()];
  assert.ok(samePairs().some(([f, b]) => f === 'ok' && b === 'ok-bg'), 'the matrix cells and the badge (ok on ok-bg) are among the pairs');
  const low = [];
  for (const [theme, vars] of [['light', light], ['dark', dark]]) {
    for (const [f, b] of pairs) {
      const ratio = contrast(vars[f], vars[b]);
      if (!(ratio >= 4.5)) low.push(`${theme}: --${f} ${vars[f]} on --${b} ${vars[b]} = ${ratio.toFixed(2)}:1`);
    }
  }
  assert.deepEqual(low, []);
});

test('button text on the accent colour reaches 4.5:1 in both themes', () => {
  const lightText = /\nbutton \{[^}]*color:\s*(#[0-9a-f]+)/i.exec(CSS)[1];
  const darkText = /prefers-color-scheme: dark\)\s*\{\s*button \{\s*color:\s*(#[0-9a-f]+)/i.exec(CSS)[1];
  assert.ok(contrast(lightText, light.accent) >= 4.5, `light: ${lightText} on ${light.accent} = ${contrast(lightText, light.accent).toFixed(2)}`);
  assert.ok(contrast(darkText, dark.accent) >= 4.5, `dark: ${darkText} on ${dark.accent} = ${contrast(darkText, dark.accent).toFixed(2)}`);
});

test('the contrast formula matches known WCAG values', () => {
  assert.equal(contrast('#000000', '#ffffff').toFixed(1), '21.0');
  assert.equal(contrast('#777777', '#ffffff').toFixed(2), '4.48'); // the classic "just fails AA" grey
  assert.equal(contrast('#ffffff', '#ffffff'), 1);
});

test('the embed widget\'s badge colours (its own stylesheet) reach 4.5:1 in both themes', () => {
  const js = fs.readFileSync(path.join(ROOT, 'web/embed.js'), 'utf8');
  const blocks = [...js.matchAll(/:host\s*\{([^}]*)\}/g)].map((m) => Object.fromEntries([...m[1].matchAll(/--([\w-]+):\s*(#[0-9a-f]+)/gi)].map((x) => [x[1], x[2]])));
  assert.equal(blocks.length >= 2, true, 'light and dark :host blocks');
  const [lightVars, darkVars] = [blocks[0], { ...blocks[0], ...blocks.at(-1) }];
  for (const [theme, v] of [['light', lightVars], ['dark', darkVars]]) {
    for (const [f, b] of [['ok', 'ok-bg'], ['bad', 'bad-bg'], ['muted', 'bg']]) {
      assert.ok(contrast(v[f], v[b]) >= 4.5, `embed ${theme}: --${f} ${v[f]} on --${b} ${v[b]} = ${contrast(v[f], v[b]).toFixed(2)}:1`);
    }
  }
});
