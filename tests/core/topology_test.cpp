// The topology (core/src/parallel/topology.h): the parallel degrees are validated once, every bad
// combination is refused with an error naming its field, and a valid one gives the data-parallel
// degree, the node layout and the rank roles. Expected values follow the definitions cited in the
// header: Megatron-LM's data_parallel_size = world_size / (tp x pp x cp), 8-GPU nodes by default.
#include <string>

#include <gtest/gtest.h>

#include "parallel/topology.h"
#include "test_support.h"
#include "vramplan/estimate.h"

namespace vramplan {
namespace topology_test {

struct BadDegrees {
  const char* model;
  const char* parallel;
  const char* field;  // the field the first error names
};

// Each row: a parallel object the reader must refuse, and the field its error names.
const BadDegrees kBad[] = {
    {"meta-llama/Llama-3.1-8B", R"({"gpus":6,"tp":4})", "parallel.gpus"},                // 6 is not a multiple of 4
    {"meta-llama/Llama-3.1-8B", R"({"gpus":8,"tp":2,"pp":2,"cp":4})", "parallel.gpus"},  // tp x pp x cp = 16 > 8
    {"meta-llama/Llama-3.1-8B", R"({"gpus":12,"tp":8})", "parallel.gpus"},
    {"meta-llama/Llama-3.1-8B", R"({"gpus":8,"zero":2,"fsdp":true})", "parallel.fsdp"},
    {"meta-llama/Llama-3.1-8B", R"({"gpus":0})", "parallel.gpus"},
    {"meta-llama/Llama-3.1-8B", R"({"tp":0})", "parallel.tp"},
    {"meta-llama/Llama-3.1-8B", R"({"pp":-1})", "parallel.pp"},
    {"meta-llama/Llama-3.1-8B", R"({"cp":0})", "parallel.cp"},
    {"meta-llama/Llama-3.1-8B", R"({"ep":0})", "parallel.ep"},
    {"meta-llama/Llama-3.1-8B", R"({"gpus_per_node":0})", "parallel.gpus_per_node"},
    {"meta-llama/Llama-3.1-8B", R"({"gpus_per_node":"8"})", "parallel.gpus_per_node"},
    {"meta-llama/Llama-3.1-8B", R"({"gpus_per_node":2097152})", "parallel.gpus_per_node"},
    {"meta-llama/Llama-3.1-8B", R"({"gpus":3,"tp":3})", "parallel.tp"},     // 32 heads
    {"meta-llama/Llama-3.1-8B", R"({"gpus":64,"pp":64})", "parallel.pp"},   // 32 layers
    {"mistralai/Mixtral-8x7B-v0.1", R"({"gpus":3,"ep":3})", "parallel.ep"},  // 8 experts
    // Training-only combinations: pipelines need a trainer that runs a schedule; the split covers the layers.
    {"meta-llama/Llama-3.1-8B", R"({"gpus":2,"pp":2})", "parallel.pp"},
    {"meta-llama/Llama-3.1-8B", R"({"gpus":3,"pp":3},"framework":{"trainer":"megatron"})", "parallel.pp"},  // 3 does not divide 32
    {"meta-llama/Llama-3.1-8B", R"({"gpus":2,"pp":2,"pp_layers":[16,15]},"framework":{"trainer":"megatron"})", "parallel.pp_layers"},
    {"meta-llama/Llama-3.1-8B", R"({"gpus":2,"pp":2,"vpp":3},"framework":{"trainer":"megatron"})", "parallel.vpp"},  // 6 does not divide 32
    {"meta-llama/Llama-3.1-8B", R"({"gpus":2,"cp":2},"train":{"attention":"eager"})", "train.attention"},
    {"meta-llama/Llama-3.1-8B", R"({"gpus":2,"cp":2},"train":{"seq_len":2050})", "train.seq_len"},
    {"meta-llama/Llama-3.1-8B", R"({"gpus":2,"ep":2})", "parallel.ep"},  // a dense model
    {"meta-llama/Llama-3.1-8B", R"({"gpus":8,"zero":3},"framework":{"trainer":"megatron"})", "parallel.zero"},
    {"mistralai/Mixtral-8x7B-v0.1", R"({"gpus":8,"tp":2,"ep":4},"framework":{"trainer":"megatron"})", "parallel.sequence_parallel"},
    {"mistralai/Mixtral-8x7B-v0.1", R"({"gpus":4,"tp":2,"ep":4,"etp":2,"sequence_parallel":true})", "parallel.ep"},  // ep x etp = 8 > 4
    // MoE capacity: a positive number, on a mixture-of-experts model; padding needs a factor.
    {"mistralai/Mixtral-8x7B-v0.1", R"({"gpus":8,"ep":8,"moe_capacity_factor":-1},"framework":{"trainer":"megatron"})", "parallel.moe_capacity_factor"},
    {"mistralai/Mixtral-8x7B-v0.1", R"({"gpus":8,"ep":8,"moe_capacity_factor":"1.0"},"framework":{"trainer":"megatron"})", "parallel.moe_capacity_factor"},
    {"meta-llama/Llama-3.1-8B", R"({"gpus":8,"moe_capacity_factor":1.25},"framework":{"trainer":"megatron"})", "parallel.moe_capacity_factor"},
    {"mistralai/Mixtral-8x7B-v0.1", R"({"gpus":8,"ep":8,"moe_pad_expert_input_to_capacity":true},"framework":{"trainer":"megatron"})",
     "parallel.moe_pad_expert_input_to_capacity"},
    // Interleaving with a custom split lists the pp x vpp virtual stages.
    {"meta-llama/Llama-3.1-8B", R"({"gpus":2,"pp":2,"vpp":2,"pp_layers":[16,16]},"framework":{"trainer":"megatron"})", "parallel.pp_layers"},
    {"meta-llama/Llama-3.1-8B", R"({"gpus":2,"pp":2,"vpp":2,"pp_layers":[8,8,8,7]},"framework":{"trainer":"megatron"})", "parallel.pp_layers"},
};

TEST(Topology, BadDegreesAreRefusedNamingTheField) {
  for (const auto& row : kBad) {
    const std::string json = std::string(R"({"model":")") + row.model + R"(","parallel":)" + row.parallel + "}";
    auto s = ParseScenario(json);
    ASSERT_FALSE(s.ok()) << json;
    ASSERT_FALSE(s.errors().empty()) << json;
    EXPECT_EQ(s.errors()[0].field_path, row.field) << json << ": " << s.errors()[0].message;
  }
}

TEST(Topology, GoodDegreesAreAccepted) {
  for (const char* parallel : {R"({"gpus":16,"tp":2,"pp":2},"framework":{"trainer":"torchtitan"})",
                               R"({"gpus":64,"tp":4,"pp":4,"vpp":2,"sequence_parallel":true,"zero":1},"framework":{"trainer":"megatron"})",
                               R"({"gpus":8,"pp":2,"pp_layers":[15,17]},"framework":{"trainer":"megatron"})", R"({"gpus":8,"tp":8})", R"({"gpus":8,"cp":2,"zero":3})",
                               R"({"gpus":16,"gpus_per_node":4,"fsdp":true})", R"({"gpus":1,"gpus_per_node":8})",
                               R"({"gpus":4,"pp":4,"vpp":2,"pp_layers":[3,4,4,4,4,4,4,5]},"framework":{"trainer":"megatron"})"}) {
    const std::string json = std::string(R"({"model":"meta-llama/Llama-3.1-8B","parallel":)") + parallel + "}";
    auto s = ParseScenario(json);
    EXPECT_TRUE(s.ok()) << json << ": " << (s.ok() ? "" : s.errors()[0].message);
  }
}

// The validator on its own (no reader): the same errors from the same function.
TEST(Topology, ValidateTopologyNamesTheField) {
  ParallelConfig p;
  p.gpus = 10;
  p.tp = 4;
  Issues errors;
  ValidateTopology(p, &errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].code, "invalid_value");
  EXPECT_EQ(errors[0].field_path, "parallel.gpus");
  p.gpus = 8;
  p.zero = 3;
  p.fsdp = true;
  errors.clear();
  ValidateTopology(p, &errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].field_path, "parallel.fsdp");
}

Topology Of(const std::string& json) {
  auto s = ParseScenario(json);
  EXPECT_TRUE(s.ok()) << json;
  return s.ok() ? TopologyOf(s.value()) : Topology{};
}

TEST(Topology, DegreesNodesAndRoles) {
  // 16 GPUs, tp 2 x pp 2: dp = 16 / 4 = 4; two 8-GPU nodes; one role per pipeline stage.
  const Topology t = Of(R"({"model":"meta-llama/Llama-3.1-8B","parallel":{"gpus":16,"tp":2,"pp":2},"framework":{"trainer":"megatron"}})");
  EXPECT_EQ(t.dp, 4);
  EXPECT_EQ(t.gpus_per_node, 8);
  EXPECT_EQ(t.Nodes(), 2);
  EXPECT_EQ(t.RanksPerNode(), 8);
  EXPECT_EQ(t.host_processes_per_node, 8);  // torchrun: one process per GPU
  ASSERT_EQ(t.roles.size(), 2u);
  EXPECT_EQ(t.roles[0].name, "stage 0");
  EXPECT_EQ(t.roles[1].name, "stage 1");
  EXPECT_EQ(t.roles[1].count, 8);
  EXPECT_EQ(t.roles[1].pipeline_stage, 1);

  // Smaller than a node: the job's GPUs share one host.
  const Topology small = Of(R"({"model":"meta-llama/Llama-3.1-8B","parallel":{"gpus":4,"zero":2}})");
  EXPECT_EQ(small.gpus_per_node, 4);
  EXPECT_EQ(small.Nodes(), 1);
  EXPECT_EQ(small.host_processes_per_node, 4);

  const Topology four = Of(R"({"model":"meta-llama/Llama-3.1-8B","parallel":{"gpus":16,"gpus_per_node":4,"fsdp":true}})");
  EXPECT_EQ(four.dp, 16);
  EXPECT_EQ(four.Nodes(), 4);
  EXPECT_EQ(four.host_processes_per_node, 4);
}

TEST(Topology, InferenceEnginesArrangeTheGpus) {
  // transformers generate() with tp = 1: one process, layers split over every GPU (device_map="auto").
  const Topology split = Of(R"({"model":"meta-llama/Llama-3.1-8B","mode":"inference","parallel":{"gpus":4}})");
  EXPECT_EQ(split.layer_split, 4);
  EXPECT_EQ(split.dp, 1);
  EXPECT_EQ(split.host_processes_per_node, 1);
  // With tensor parallelism the layers are not split; GPUs beyond tp are replicas.
  const Topology tp = Of(R"({"model":"meta-llama/Llama-3.1-8B","mode":"inference","parallel":{"gpus":4,"tp":2}})");
  EXPECT_EQ(tp.layer_split, 1);
  EXPECT_EQ(tp.dp, 2);
  EXPECT_EQ(tp.host_processes_per_node, 4);  // tp_plan="auto" runs under torchrun: one process per GPU
  // vLLM: one worker process per GPU.
  const Topology vllm = Of(R"({"model":"meta-llama/Llama-3.1-8B","mode":"inference","inference":{"engine":"vllm"},"parallel":{"gpus":8,"tp":4}})");
  EXPECT_EQ(vllm.host_processes_per_node, 8);
  EXPECT_EQ(vllm.layer_split, 1);
  // llama.cpp: one process.
  const Topology llama = Of(R"({"model":"meta-llama/Llama-3.1-8B","mode":"inference","inference":{"engine":"llama_cpp","weights":"gguf_q4_k_m"},"parallel":{"gpus":2}})");
  EXPECT_EQ(llama.host_processes_per_node, 1);
}

// gpus_per_node is echoed in the normalized scenario, resolved (default min(gpus, 8)).
TEST(Topology, GpusPerNodeIsEchoed) {
  const std::string r16 = EstimateJson(R"({"model":"meta-llama/Llama-3.1-8B","parallel":{"gpus":16,"zero":3}})");
  EXPECT_NE(r16.find(R"("gpus":16,"gpus_per_node":8,)"), std::string::npos);
  const std::string r2 = EstimateJson(R"({"model":"meta-llama/Llama-3.1-8B","parallel":{"gpus":2,"gpus_per_node":4}})");
  EXPECT_NE(r2.find(R"("gpus":2,"gpus_per_node":4,)"), std::string::npos);
}

}  // namespace
}  // namespace vramplan
