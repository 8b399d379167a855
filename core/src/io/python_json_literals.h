#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace vramplan::io {

// Python's json module writes float('inf') and float('nan') as the bare tokens Infinity, -Infinity
// and NaN, which JSON does not have; transformers saves configs that way (Mamba-2's
// `"time_step_limit": [0.0, Infinity]`). Outside string literals each such token becomes the string
// "Infinity", "-Infinity" or "NaN", so a pasted config.json parses, keys that are not read stay
// harmless, and a key that must be a number reports that string by its path instead of a syntax
// error. nullopt: the text has none (nothing copied).
std::optional<std::string> PythonJsonLiteralsAsStrings(std::string_view text);

}  // namespace vramplan::io
