// Minimal page: loads the WASM core once and shows the result of one scenario.
import createVramplan from './vramplan.mjs';

const core = await createVramplan();
const scenario = { model: 'meta-llama/Llama-3.1-8B', mode: 'train', train: { method: 'lora', micro_batch_size: 4, seq_len: 2048 } };
const result = JSON.parse(core.estimate(JSON.stringify(scenario)));
document.getElementById('status').textContent = result.ok ? `${result.model.name}: ${result.params.total.toLocaleString()} parameters` : result.errors[0].message;
document.getElementById('result').textContent = JSON.stringify(result, null, 2);
