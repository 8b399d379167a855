// Inference entry point: validate, run the chosen engine, answer the inverse questions.
#include "inference/inference.h"

#include <algorithm>
#include <optional>

#include "diagnostics/warning_codes.h"
#include "gpu/device_overhead.h"
#include "inference/engines.h"
#include "inference/vllm_multimodal.h"
#include "model/video_tokens.h"

namespace vramplan {

namespace engine_util {

void SetTerm(Result* r, const std::string& key, int64_t bytes, std::string explain) {
  for (auto& t : r->gpu.breakdown) {
    if (t.key == key) {
      t.bytes = bytes;
      t.explain = std::move(explain);
      return;
    }
  }
  r->gpu.breakdown.push_back(Term{key, bytes, std::move(explain)});
}

int64_t PromptPlusNew(const Scenario& s) { return std::max<int64_t>(1, s.inference.prompt_len + s.inference.new_tokens); }

void Warn(Result* r, bool explain, WarningCode code, const std::string& field, const std::string& message) {
  if (explain) r->warnings.push_back(MakeWarning(code, field, message));
}

}  // namespace engine_util

void RunInferenceEngine(const Scenario& scenario, const RankShard& rank, const Prepared& prepared, Result* r, bool explain) {
  // Vision-language models: prompt_len counts the text tokens; each image adds its tokens to the
  // prompt the decoder runs over (inference/vllm_multimodal.h, docs/models.md "Image inputs").
  const int64_t image_tokens = InferenceImageTokens(scenario);
  std::optional<Scenario> with_images;
  if (image_tokens > 0) {
    with_images = scenario;
    with_images->inference.prompt_len += image_tokens;
  }
  const Scenario& s = with_images ? *with_images : scenario;
  switch (s.inference.engine) {
    case Engine::kVllm: EstimateVllmEngine(s, rank, prepared, r, explain); break;
    case Engine::kLlamaCpp: EstimateLlamaCppEngine(s, rank, prepared, r, explain); break;
    default: EstimateTransformersEngine(s, rank, prepared, r, explain); break;
  }
}

bool InferenceFits(const Scenario& s, const Result& r) {
  if (!r.gpu.fits) return false;
  if (s.inference.engine == Engine::kVllm) {
    return r.inference.max_model_len_fits && r.inference.kv_token_capacity > 0;
  }
  return true;
}

void EstimateInference(const Scenario& scenario, const RankShard& rank, const Prepared& prepared, Result* result, bool explain, bool inverse) {
  if (scenario.model.kinds.empty() || scenario.model.layer_kind.empty()) {
    result->warnings.push_back(MakeWarning(WarningCode::kNotEstimated, "model", "the model has no decoder layers to estimate"));
    return;
  }
  if (scenario.inference.batch_size < 1 || scenario.inference.prompt_len < 0 || scenario.inference.new_tokens < 0) {
    result->warnings.push_back(MakeWarning(WarningCode::kNotEstimated, "inference", "batch_size must be >= 1 and token counts >= 0"));
    return;
  }
  RunInferenceEngine(scenario, rank, prepared, result, explain);
  if (explain && !scenario.model.approximations.kv_cache.empty()) {
    result->warnings.push_back(MakeWarning(WarningCode::kApproximate, "model", scenario.model.approximations.kv_cache));
  }
  if (explain && scenario.inference.images_per_request > 0 && scenario.model.vision.kind == VisionKind::kNone) {
    result->warnings.push_back(MakeWarning(WarningCode::kNoEffect, "inference.images_per_request",
                                           "images apply to vision-language models with a modelled vision tower (docs/models.md); this model reads text only"));
  }
  if (explain && scenario.inference.videos_per_request > 0 && !TakesVideo(scenario.model.vision)) {
    result->warnings.push_back(MakeWarning(WarningCode::kNoEffect, "inference.videos_per_request",
                                           "videos apply to the vision-language models whose processors take video (Qwen2.5-VL, Qwen3-VL; docs/models.md); this model's are not modelled"));
  }
  if (scenario.parallel.pp > 1 || scenario.parallel.cp > 1 || scenario.parallel.ep > 1) {
    result->warnings.push_back(MakeWarning(WarningCode::kNotModeled, "parallel", "pipeline/context/expert parallel inference is not modelled; only tp shards weights and KV heads"));
  }
  if (inverse) SolveInverseQuestions(scenario, prepared, result);
}

}  // namespace vramplan
