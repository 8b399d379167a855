// Python's json module writes inf / nan as the bare tokens Infinity, -Infinity, NaN; transformers
// saves Mamba-2 configs with `"time_step_limit": [0.0, Infinity]` (Mamba2Config's default upper
// limit, float("inf")). io/python_json_literals.h reads them as strings so that such a config.json
// parses; strings and identifiers that merely contain the words are left alone.
#include <gtest/gtest.h>

#include <string>

#include "io/python_json_literals.h"
#include "vramplan/estimate.h"

namespace vramplan {
namespace python_json_literals_test {

TEST(PythonJsonLiterals, BareTokensBecomeStrings) {
  EXPECT_EQ(io::PythonJsonLiteralsAsStrings(R"({"a":[0.0, Infinity],"b":-Infinity,"c":NaN})").value(),
            R"({"a":[0.0, "Infinity"],"b":"-Infinity","c":"NaN"})");
  EXPECT_EQ(io::PythonJsonLiteralsAsStrings("[Infinity]").value(), R"(["Infinity"])");
}

TEST(PythonJsonLiterals, StringsAndOtherTokensUntouched) {
  EXPECT_FALSE(io::PythonJsonLiteralsAsStrings(R"({"Infinity":"NaN and -Infinity \" NaN","x":-1.5e3,"y":true})").has_value());
  EXPECT_FALSE(io::PythonJsonLiteralsAsStrings(R"({"a":NaNx})").has_value());   // not a whole token: stays a syntax error
  EXPECT_FALSE(io::PythonJsonLiteralsAsStrings(R"({"a":xNaN})").has_value());
  EXPECT_FALSE(io::PythonJsonLiteralsAsStrings("").has_value());
}

// A Mamba-2 config as transformers saves it parses, and the key it sets is not one the reader needs;
// a key the reader needs as a number reports the string by its path.
TEST(PythonJsonLiterals, SavedMambaConfigParses) {
  const std::string config = R"({"architectures":["Mamba2ForCausalLM"],"model_type":"mamba2","hidden_size":256,"state_size":16,
    "num_hidden_layers":2,"vocab_size":1000,"expand":2,"conv_kernel":4,"n_groups":1,"head_dim":64,"num_heads":8,
    "chunk_size":256,"use_bias":false,"use_conv_bias":true,"tie_word_embeddings":true,"time_step_limit":[0.0, Infinity]})";
  auto ok = ParseScenario(R"({"model":)" + config + "}");
  EXPECT_TRUE(ok.ok()) << (ok.ok() ? "" : ok.errors()[0].field_path + ": " + ok.errors()[0].message);
  auto bad = ParseScenario(R"({"model":{"model_type":"llama","hidden_size":Infinity,"intermediate_size":128,"num_attention_heads":2,"num_hidden_layers":2,"vocab_size":100}})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.errors()[0].field_path, "model.hidden_size");
}

}  // namespace
}  // namespace vramplan
