// User-provided text (URL values, pasted configs, model names, Hub ids) is only ever text:
// no dialog, no injected element, no script run.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, startBrowser, openPage, pageScenario, configOutcome } from './harness.mjs';

let server; let chrome;
before(async () => { server = await startServer(); chrome = await startBrowser(); });
after(async () => { await chrome?.close(); await server?.close(); });

const PAYLOAD = '"><img src=x onerror=alert(1)><script>alert(2)</script><svg onload=alert(3)>';
const injected = (page) => page.evaluate(() => document.querySelectorAll('img, script:not([src]), svg[onload], iframe, object').length);

test('XSS payloads in the URL, configs and names are inert', async () => {
  const q = new URLSearchParams({ v: '1', model: PAYLOAD, 'train.method': PAYLOAD, [PAYLOAD]: '1', 'gpu.name': PAYLOAD, 'gpu.memory_bytes': '25769803776', ladder: PAYLOAD, hub: `javascript:${PAYLOAD}` });
  const { page, problems, context } = await openPage(chrome.browser, `${server.base}/?${q}`);
  const notice = await page.locator('#notice').textContent();
  assert.ok(notice.includes('<img src=x onerror=alert(1)>'), 'the payload is shown as text');
  assert.equal((await pageScenario(page)).gpu.name, PAYLOAD);
  assert.ok((await page.locator('#verdict').textContent()).includes(PAYLOAD), 'custom GPU name shown as text');
  assert.equal(await injected(page), 0);

  // Pasted config with payloads in names and values.
  await page.locator('#cfg-box summary').click();
  const cfg = { _name_or_path: PAYLOAD, model_type: 'llama', architectures: [PAYLOAD], hidden_size: 256, intermediate_size: 688,
    num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 4, vocab_size: 1000, max_position_embeddings: 512 };
  await page.fill('#cfg-text', JSON.stringify(cfg));
  await page.click('#cfg-use');
  await configOutcome(page);
  await page.fill('#cfg-text', JSON.stringify({ ...cfg, model_type: PAYLOAD }));
  await page.click('#cfg-use');
  await configOutcome(page);
  await page.fill('#cfg-text', PAYLOAD);
  await page.click('#cfg-use');
  await configOutcome(page);
  // Hub id payload and preset search payload.
  await page.locator('#hub-box summary').click();
  await page.fill('#hub-id', PAYLOAD);
  await page.click('#hub-load');
  await page.fill('#preset-search', PAYLOAD);
  await page.waitForTimeout(200);
  assert.equal(await injected(page), 0);
  assert.deepEqual(problems, []);
  await context.close();
});
