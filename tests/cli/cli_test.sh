#!/usr/bin/env bash
# The CLI's contract: exit 0 + JSON on success, exit 2 + one "error: <path>: <message>" line per
# problem on bad input, listings for models/gpus/schema.
set -u
bin="$VRAMPLAN_BIN"
fail=0
check() {  # check NAME EXPECTED_CODE EXPECTED_STDERR_SUBSTRING INPUT
  local out code
  out=$(printf '%s' "$4" | "$bin" estimate - 2>&1 >/dev/null); code=$?
  if [ "$code" != "$2" ] || ! grep -qF -- "$3" <<<"$out"; then
    echo "FAIL $1: code=$code stderr=$out"; fail=1
  else
    echo "ok   $1"
  fi
}
check valid 0 "" '{"model":"meta-llama/Llama-3.1-8B"}'
check malformed 2 "error: the scenario is not valid JSON" '{"model":'
check wrong_type 2 "error: train.micro_batch_size: train.micro_batch_size must be an integer" '{"model":"meta-llama/Llama-3.1-8B","train":{"micro_batch_size":"4"}}'
check zero 2 "error: train.seq_len:" '{"model":"meta-llama/Llama-3.1-8B","train":{"seq_len":0}}'
check negative 2 "error: parallel.gpus:" '{"model":"meta-llama/Llama-3.1-8B","parallel":{"gpus":-8}}'
check absurd 2 "error: train.micro_batch_size:" '{"model":"meta-llama/Llama-3.1-8B","train":{"micro_batch_size":1000000000}}'
check enum 2 'did you mean "bf16"' '{"model":"meta-llama/Llama-3.1-8B","train":{"precision":"bf61"}}'
check preset 2 "error: model: unknown preset" '{"model":"meta-llama/Llama-9-8B"}'
check unknown_key 2 'error: train.lora.rnak: unknown key "rnak"' '{"model":"meta-llama/Llama-3.1-8B","train":{"lora":{"rnak":8}}}'
check missing_cfg_key 2 "error: model.num_attention_heads:" '{"model":{"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"vocab_size":100,"intermediate_size":128}}'
check lora_target 2 "error: train.lora.targets[0]: this model has no linear module" '{"model":"meta-llama/Llama-3.1-8B","train":{"method":"lora","lora":{"targets":["c_attn"]}}}'
code=0; "$bin" estimate /nonexistent >/dev/null 2>&1 || code=$?; [ "$code" = 1 ] && echo "ok   unreadable" || { echo "FAIL unreadable: $code"; fail=1; }
"$bin" models | grep -q '"Qwen/Qwen2.5-0.5B"' && echo "ok   models" || { echo "FAIL models"; fail=1; }
"$bin" gpus | grep -q '"h100-sxm-80gb"' && echo "ok   gpus" || { echo "FAIL gpus"; fail=1; }
"$bin" schema | grep -q '"vramplan scenario v1"' && echo "ok   schema" || { echo "FAIL schema"; fail=1; }
printf '%s' '{"model":"meta-llama/Llama-3.1-8B","mode":"train"}' | "$bin" estimate - --table | grep -q "peak allocated" && echo "ok   table" || { echo "FAIL table"; fail=1; }
exit $fail
