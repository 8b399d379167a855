#include "launch/formats.h"

#include "launch/shell_words.h"
#include "launch/text_documents.h"
#include "launch/yaml_subset.h"

namespace vramplan::launch {

const std::vector<Format>& Formats() {
  static const std::vector<Format> formats = {
      {"vllm", &ImportVllm, &ExportVllm, Carrier::kComment},
      {"llama_cpp", &ImportLlamaCpp, &ExportLlamaCpp, Carrier::kComment},
      {"llamafactory", &ImportLlamaFactory, &ExportLlamaFactory, Carrier::kComment},
      {"axolotl", &ImportAxolotl, &ExportAxolotl, Carrier::kComment},
      {"deepspeed", &ImportDeepSpeed, &ExportDeepSpeed, Carrier::kJsonMember},
      {"hf", &ImportHfTraining, &ExportHfTraining, Carrier::kJsonMember},
      {"torchtune", &ImportTorchtune, &ExportTorchtune, Carrier::kComment},
      {"accelerate", &ImportAccelerate, &ExportAccelerate, Carrier::kComment},
  };
  return formats;
}

const Format* FindFormat(std::string_view name) {
  for (const Format& f : Formats()) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

namespace {

bool HasAny(const io::Json& doc, std::initializer_list<const char*> keys) {
  if (!doc.is_object()) return false;
  for (const char* k : keys) {
    if (doc.contains(k)) return true;
  }
  return false;
}

std::string Basename(const std::string& word) {
  const size_t slash = word.find_last_of('/');
  return slash == std::string::npos ? word : word.substr(slash + 1);
}

std::string DetectCommand(std::string_view text) {
  std::vector<ShellCommand> commands;
  Issues ignored;
  if (!SplitShellCommands(text, &commands, &ignored)) return "";
  for (const ShellCommand& c : commands) {
    for (const std::string& w : c.words) {
      const std::string b = Basename(w);
      if (b == "vllm" || w == "vllm.entrypoints.openai.api_server") return "vllm";
      if (b == "llama-server" || b == "llama-cli" || b == "server" || b == "main") {
        if (b.rfind("llama", 0) == 0) return "llama_cpp";
      }
      if (b == "tune") return "torchtune";
      if (b == "llamafactory-cli") return "llamafactory";
    }
  }
  return "";
}

}  // namespace

std::string DetectFormat(std::string_view text) {
  size_t first = 0;
  while (first < text.size() && (text[first] == ' ' || text[first] == '\n' || text[first] == '\r' || text[first] == '\t')) ++first;
  if (first < text.size() && text[first] == '{') {
    std::vector<io::Json> docs;
    Issues ignored;
    if (!ParseJsonDocuments(text, &docs, &ignored) || docs.empty()) return "";
    const io::Json& d = docs[0];
    if (HasAny(d, {"zero_optimization", "train_micro_batch_size_per_gpu", "train_batch_size", "zero_allow_untested_optimizer"})) {
      return HasAny(d, {"per_device_train_batch_size", "output_dir", "optim", "r", "peft_type"}) ? "hf" : "deepspeed";
    }
    return "hf";
  }
  const std::string command = DetectCommand(text);
  if (!command.empty() && command != "torchtune" && command != "llamafactory") return command;
  std::vector<io::Json> docs;
  Issues ignored;
  // torchtune override lines (key=value) are not YAML: detect on the lines that are.
  std::string yaml;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    if (line.find('=') == std::string_view::npos || line.find(':') != std::string_view::npos) yaml.append(line).append("\n");
    start = end + 1;
  }
  if (!ParseYamlDocuments(yaml, &docs, &ignored) || docs.empty()) return command;
  const io::Json& d = docs[0];
  if (HasAny(d, {"distributed_type", "fsdp_config", "deepspeed_config", "compute_environment", "num_processes"}) &&
      !HasAny(d, {"base_model", "model_name_or_path", "finetuning_type"})) {
    return "accelerate";
  }
  if (HasAny(d, {"finetuning_type", "stage", "cutoff_len", "lora_target", "template"})) return "llamafactory";
  if (HasAny(d, {"base_model", "adapter", "sequence_len", "micro_batch_size", "lora_target_linear", "datasets"})) return "axolotl";
  if (d.is_object() && d.contains("model") && d["model"].is_object() && d["model"].contains("_component_")) return "torchtune";
  if (HasAny(d, {"checkpointer", "enable_activation_checkpointing", "tokenizer"})) return "torchtune";
  if (HasAny(d, {"per_device_train_batch_size", "output_dir", "model_name_or_path"})) return "hf";
  return command;
}

}  // namespace vramplan::launch
