// Stored persistent buffers of checkpoints saved by older transformers versions (legacy_buffers.h).
//
// Version boundaries (the first release whose save_pretrained leaves the buffer out):
// - GPT-2 `h.N.attn.bias` (and the 0-d `masked_bias`): transformers PR #23256 registered them
//   with persistent=False (named by PR #24113 of 2023-06-08, "forgot to add them in #23256", which
//   added the matching `_keys_to_ignore_on_load_unexpected` because from_pretrained("gpt2") now
//   warned about the checkpoint's unused `h.N.attn.bias`); first release v4.30.0.
// - LlamaRotaryEmbedding `inv_freq`: PR #24998 "[Llama] remove persistent inv_freq tensor"
//   (commit 95f96b45ffb57291c69a43d7a11a5bb166220d0b, opened 2023-07-21, after v4.31.0 of
//   2023-07-18); first release v4.32.0. Llama-2 (converted with 4.31.0.dev0) stores it, Llama 3
//   (4.40.0.dev0) and CodeLlama (after 4.32) do not.
// - GPT-Neo, GPT-NeoX, GPT-J and CodeGen causal masks: current transformers registers them with
//   persistent=False too; the release is taken as GPT-2's (v4.30.0) and GPT-NeoX's rotary inv_freq
//   as Llama's (v4.32.0), INFERRED, not read from those PRs' diffs. Every measured checkpoint of
//   these families (Pythia: 4.24.0; GPT-Neo: 4.9.0.dev0 or absent) lies below either boundary.
// The 0-d `masked_bias` scalars the old code also registered are not in any measured Hub total
// (gpt-neo-125m, pythia-70m and gpt2 are exact without them), so they are not counted.
//
// Measured (exact Hub safetensors totals; tests/fixtures/param_counts.json and
// tests/core/legacy_buffers_test.cpp): gpt2 137,022,720 = 124,439,808 + 12 x 1,024^2;
// gpt-neo-125m 150,364,416 = 125,198,592 + 6 x 2,048^2 (6 global of 12 layers); pythia-1b
// 1,078,891,008 = 1,011,781,632 + 16 x (2,048^2 + 32); Llama-2-7b-hf 6,738,417,664 =
// 6,738,415,616 + 32 x 64.
#include "model/legacy_buffers.h"

#include <cstdlib>
#include <string>

#include "format.h"
#include "util/checked_math.h"

namespace vramplan {
namespace {

using Json = nlohmann::json;

// The buffers one family's checkpoint stores, and the release that stopped saving them.
struct StoredBuffers {
  int64_t elements = 0;
  std::string what;     // "12 x h.N.attn.bias (1,024 x 1,024)"
  std::string release;  // "4.30"
};

std::string Count(int64_t n) { return WithCommas(n); }

// GPTNeoConfig.attention_layers: the per-layer types ("global" / "local"), as the saved config
// lists them, else expanded from attention_types ([[["global", "local"], 12]], the class default).
int64_t GptNeoGlobalLayers(const Json& config, int64_t layers) {
  auto listed = config.find("attention_layers");
  if (listed != config.end() && listed->is_array() && static_cast<int64_t>(listed->size()) == layers) {
    int64_t global = 0;
    for (const Json& t : *listed) global += t.is_string() && t.get<std::string>() == "global" ? 1 : 0;
    return global;
  }
  Json types = Json::array({Json::array({Json::array({"global", "local"}), 12})});
  auto given = config.find("attention_types");
  if (given != config.end() && given->is_array()) types = *given;
  int64_t global = 0;
  int64_t expanded = 0;
  for (const Json& item : types) {
    if (!item.is_array() || item.size() != 2 || !item[0].is_array() || !item[1].is_number_integer()) return 0;
    const int64_t repeat = item[1].get<int64_t>();
    if (repeat < 0 || repeat > layers) return 0;
    for (int64_t r = 0; r < repeat; ++r) {
      for (const Json& t : item[0]) {
        ++expanded;
        global += t.is_string() && t.get<std::string>() == "global" ? 1 : 0;
      }
    }
  }
  return expanded == layers ? global : 0;
}

// `saved`: the version that saved the checkpoint (nullopt: the original checkpoint, which stores them).
StoredBuffers Buffers(const Json& config, const std::string& type, const ModelSpec& spec,
                      const std::optional<std::pair<int, int>>& saved) {
  StoredBuffers b;
  auto before = [&](int minor) { return !saved || *saved < std::pair<int, int>{4, minor}; };
  const int64_t layers = static_cast<int64_t>(spec.layer_kind.size());
  if (layers == 0 || spec.kinds.empty()) return b;
  const int64_t positions = spec.max_position_embeddings;
  // Checked products: a config's sizes are only bounded by the reader (util/checked_math.h).
  const int64_t mask = checked::Mul(positions, positions);  // `bias` / `causal_mask`, shape (1, 1, positions, positions)
  const std::string mask_shape = " (" + Count(positions) + " x " + Count(positions) + ")";
  // inv_freq = 1 / base^(arange(0, dim, 2) / dim): ceil(dim / 2) elements.
  auto inv_freq = [](int64_t dim) { return (dim + 1) / 2; };
  if (type == "gpt2") {
    // GPT2Attention (modeling_gpt2.py before v4.30): register_buffer("bias", tril(ones(n_positions, n_positions))).
    // Megatron-LM's MoE GPT read as gpt2 (BuildGpt2) is not a transformers checkpoint.
    if (spec.kinds[0].mlp.num_experts > 0 || positions <= 0 || !before(30)) return b;
    b.elements = checked::Mul(layers, mask);
    b.what = Count(layers) + " x h.N.attn.bias" + mask_shape;
    b.release = "4.30";
  } else if (type == "gpt_neo") {
    // The checkpoints on the Hub hold `attn.attention.bias` in the global layers only: the
    // GPTNeoSelfAttention of the first GPT-Neo code (transformers v4.5) registered the causal mask,
    // GPTNeoLocalSelfAttention built its windowed mask per forward
    // (GPTNeoAttentionMixin.create_local_attention_mask), and the Hub totals hold exactly the global
    // layers' masks (gpt-neo-125m / 1.3B / 2.7B: 6 / 12 / 16 x 2,048^2).
    const int64_t global = GptNeoGlobalLayers(config, layers);
    if (global == 0 || positions <= 0 || !before(30)) return b;
    b.elements = checked::Mul(global, mask);
    b.what = Count(global) + " global layers' attn.attention.bias" + mask_shape;
    b.release = "4.30";
  } else if (type == "gpt_neox") {
    // GPTNeoXAttention: `bias` (positions^2) and GPTNeoXRotaryEmbedding `inv_freq` over
    // rotary_ndims = int(head_size * rotary_pct) dimensions (Pythia: 16 x (2,048^2 + 32) in pythia-1b).
    const int64_t rotary = static_cast<int64_t>(static_cast<double>(spec.kinds[0].attention.head_dim) * spec.rope_fraction);
    if (positions <= 0) return b;
    const bool masks = before(30);
    const bool freqs = before(32);
    if (!masks && !freqs) return b;
    b.elements = checked::Mul(layers, checked::Add(masks ? mask : 0, freqs ? inv_freq(rotary) : 0));
    b.what = Count(layers) + " x (" + (masks ? "attention.bias" + mask_shape + (freqs ? " + " : "") : std::string()) +
             (freqs ? "attention.rotary_emb.inv_freq (" + Count(inv_freq(rotary)) + ")" : std::string()) + ")";
    b.release = masks ? "4.30 (masks) / 4.32 (inv_freq)" : "4.32";
  } else if (type == "gptj" || type == "codegen") {
    // GPTJAttention `bias` and CodeGenAttention `causal_mask` (PR #17443 renamed GPT-2's `bias`), positions^2 each.
    if (positions <= 0 || !before(30)) return b;
    b.elements = checked::Mul(layers, mask);
    b.what = Count(layers) + " x attn." + std::string(type == "gptj" ? "bias" : "causal_mask") + mask_shape;
    b.release = "4.30";
  } else if (type == "llama") {
    // LlamaRotaryEmbedding(head_dim) in every LlamaAttention: model.layers.N.self_attn.rotary_emb.inv_freq.
    // Only with a recorded version: every Llama conversion old enough to store it says which
    // transformers wrote it (Llama-2: 4.31.0.dev0 / 4.32.0.dev0), while a config without one is
    // hand-written or from a tool, and the Llama checkpoints people run now (Llama 3 and later,
    // the fine-tunes saved since mid-2023) do not store it.
    const int64_t n = inv_freq(spec.kinds[0].attention.head_dim);
    if (!saved || !before(32)) return b;
    b.elements = checked::Mul(layers, n);
    b.what = Count(layers) + " x self_attn.rotary_emb.inv_freq (" + Count(n) + ")";
    b.release = "4.32";
  }
  return b;
}

}  // namespace

std::optional<std::pair<int, int>> TransformersMinorVersion(const std::string& version) {
  const char* s = version.c_str();
  char* end = nullptr;
  const long major = std::strtol(s, &end, 10);
  if (end == s || *end != '.' || major < 0 || major > 1000) return std::nullopt;
  const char* minor_start = end + 1;
  const long minor = std::strtol(minor_start, &end, 10);
  if (end == minor_start || minor < 0 || minor > 1000) return std::nullopt;
  return std::pair<int, int>{static_cast<int>(major), static_cast<int>(minor)};
}

void AddLegacyStoredBuffers(const Json& config, ModelSpec* spec) {
  if (!config.is_object()) return;
  auto type_it = config.find("model_type");
  if (type_it == config.end() || !type_it->is_string() || type_it->get<std::string>() != spec->model_type) return;
  auto version_it = config.find("transformers_version");
  const bool absent = version_it == config.end() || !version_it->is_string();
  std::optional<std::pair<int, int>> saved;
  if (!absent) saved = TransformersMinorVersion(version_it->get<std::string>());
  const StoredBuffers b = Buffers(config, spec->model_type, *spec, saved);
  if (b.elements <= 0) return;
  spec->checkpoint.unloaded_params = checked::Add(spec->checkpoint.unloaded_params, b.elements);
  std::string note = "params.checkpoint_total and by_module.unloaded count " + Count(b.elements) +
                     " elements of persistent buffers that transformers before " + b.release + " saved: " + b.what +
                     "; current versions recompute them (not parameters, not loaded, not in the memory estimate)";
  note += absent ? ". config.json has no transformers_version: the count assumes the original checkpoint (a re-saved "
                   "fine-tune may not store them)"
                 : saved ? " (config.json: transformers_version " + version_it->get<std::string>() + ")"
                         : ". transformers_version " + version_it->get<std::string>() +
                               " is not a version number: the count assumes the original checkpoint";
  spec->notes.push_back(std::move(note));
}

}  // namespace vramplan
