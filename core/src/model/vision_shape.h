#pragma once
// The shape of a vision-language wrapper's vision tower and its processor defaults
// (ModelSpec::vision), read from config.json for the memory terms of image inputs. The parameter
// counts stay in model/vision_tower.cpp; this reads only what sizes the tower's activations and the
// image tokens.

#include <string>

#include <nlohmann/json.hpp>

#include "vramplan/model_spec.h"

namespace vramplan {

// `wrapper_type`: the top-level model_type (a wrapper whose tower VisionTowerCounted counts);
// `text_hidden`: the decoder's hidden size. Unknown wrappers give kind kNone. Values the counting
// already range-checked are read here with the same defaults.
VisionShape ReadVisionShape(const std::string& wrapper_type, const nlohmann::json& config, int64_t text_hidden);

}  // namespace vramplan
