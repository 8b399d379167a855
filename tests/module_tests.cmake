# One GoogleTest file per core module: core/src/<dir>/<module>.cpp is tested in
# tests/core/<module>_test.cpp. The modules below are tested through a file named otherwise (the
# engines through the inference tests, the family builders through the registry test, the
# training step's parts through the step and its invariants); every other module must have its
# own file. Run by ctest (test_file_per_module):
#   cmake -DCORE_SRC=core/src -DTESTS=tests/core -P tests/module_tests.cmake
# A new module without a test file, or a stale entry here, fails with the list of both.
set(tested_elsewhere
  api/estimate=estimate_api
  api/ops=api
  api/core_ops=api
  api/op_table=api
  planner/prepared=api
  planner/simulate=api
  planner/levers=plan_search
  planner/training_levers=plan_search
  planner/serving_levers=plan_search
  planner/rollout_time=plan_search
  api/plan_op=plan_search
  planner/context_limit_check=context_limit
  planner/verdict=context_limit
  inference/engine_llama_cpp=inference_engine
  inference/engine_transformers=inference_engine
  inference/engine_vllm=inference_engine
  inference/inference=inference_validation
  inference/inverse=inference_engine
  inference/recurrent_state=hybrid_inference
  io/json_reader=scenario
  io/result_json=golden
  io/scenario_json=scenario
  model/catalog=presets
  model/gemma3n_towers=vision_tower
  model/gemma4_towers=vision_tower
  model/glm4v_tower=vision_tower
  model/internvl_tower=vision_tower
  model/kimi_vl_tower=vision_tower
  model/lfm2_vl_tower=vision_tower
  model/vision_shape=image_tokens
  scenario/schema_gen=fields
  util/size_limits=overflow
  train/activations=train_step
  train/load_phase=qlora_torchao
  train/logits_loss=train_step
  train/optimizer=optimizer_step
  train/precision=train_step
  train/train_plan=train_step
  train/weights=train_step
  launch/command_args=launch_import
  launch/deepspeed_config=launch_import
  launch/format_accelerate=launch_import
  launch/format_axolotl=launch_import
  launch/format_deepspeed=launch_import
  launch/format_hf=launch_import
  launch/format_llama_cpp=launch_import
  launch/format_llamafactory=launch_import
  launch/format_torchtune=launch_import
  launch/format_vllm=launch_import
  launch/formats=launch_import
  launch/import_context=launch_import
  launch/launch_ops=launch_roundtrip
  launch/model_match=launch_import
  launch/text_documents=launch_import
  launch/trainer_keys=launch_import
  train/preference=preference_step)

get_filename_component(CORE_SRC ${CORE_SRC} ABSOLUTE)
get_filename_component(TESTS ${TESTS} ABSOLUTE)
file(GLOB_RECURSE modules RELATIVE ${CORE_SRC} ${CORE_SRC}/*.cpp)
set(problems "")
foreach(source ${modules})
  string(REGEX REPLACE "\\.cpp$" "" module ${source})
  get_filename_component(name ${module} NAME)
  set(test_name ${name})
  foreach(entry ${tested_elsewhere})
    if(entry MATCHES "^${module}=(.*)$")
      set(test_name ${CMAKE_MATCH_1})
    endif()
  endforeach()
  if(module MATCHES "^model/families/")
    set(test_name model_families)
  endif()
  if(NOT EXISTS ${TESTS}/${test_name}_test.cpp)
    string(APPEND problems "\n  core/src/${source}: no tests/core/${test_name}_test.cpp")
  endif()
endforeach()
foreach(entry ${tested_elsewhere})
  string(REGEX REPLACE "=.*$" "" module ${entry})
  if(NOT EXISTS ${CORE_SRC}/${module}.cpp)
    string(APPEND problems "\n  tests/module_tests.cmake names core/src/${module}.cpp, which does not exist")
  elseif(EXISTS ${TESTS}/${module}_test.cpp)
    string(APPEND problems "\n  core/src/${module}.cpp has its own test file now: drop it from tests/module_tests.cmake")
  endif()
endforeach()
if(problems)
  message(FATAL_ERROR "one test file per core module:${problems}")
endif()
