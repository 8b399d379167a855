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
check malformed 2 "error: model: the scenario is not valid JSON at byte 10 (line 1, column 10)" '{"model":'
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
# The verdict line and the longest-that-fits answers say what bounds them (docs/api.md, "Verdict").
table_has() {  # table_has NAME SCENARIO FIXED_STRING
  if printf '%s' "$2" | "$bin" estimate - --table | grep -qF -- "$3"; then echo "ok   $1"; else echo "FAIL $1: no '$3'"; fail=1; fi
}
table_has verdict_fits '{"model":"meta-llama/Llama-3.1-8B","mode":"inference","gpu":"h100-sxm-80gb"}' "verdict: fits"
table_has verdict_beyond_context '{"model":"meta-llama/Llama-3.1-8B","mode":"inference","gpu":"h100-sxm-80gb","inference":{"prompt_len":200000,"new_tokens":256}}' \
  "verdict: fits in memory, but longer than the model's context limit (131,072 tokens)"
table_has longest_context_bound '{"model":"meta-llama/Llama-3.1-8B","mode":"inference","gpu":"h100-sxm-80gb","inference":{"prompt_len":200000,"new_tokens":256}}' \
  "131,072 tokens  (the model's context limit)"
table_has verdict_queued '{"model":"meta-llama/Llama-3.1-8B","mode":"inference","gpu":"rtx-4090-24gb","inference":{"engine":"vllm","batch_size":16,"prompt_len":32000,"new_tokens":768,"max_model_len":32768}}' \
  " of 16 requests at once; the rest queue"
table_has highest_precision '{"model":"meta-llama/Llama-3.1-8B","mode":"inference","gpu":"h100-sxm-80gb"}' "highest-precision weights    fp32 (the least quantized format that fits)"
table_has longest_sequence_memory '{"model":"meta-llama/Llama-3.1-8B","train":{"method":"lora"},"gpu":"rtx-4090-24gb"}' "  (memory)"
# A pipeline job: one table line per stage, the worst marked.
printf '%s' '{"model":"meta-llama/Llama-2-70b-hf","parallel":{"gpus":64,"tp":4,"pp":4,"sequence_parallel":true,"zero":1},"train":{"method":"full","precision":"mixed_bf16","grad_accum_steps":32,"gradient_checkpointing":false,"attention":"flash","seq_len":4096},"framework":{"trainer":"megatron"}}' \
  | "$bin" estimate - --table | grep -c "^stage [0-3] " | grep -qx 4 && echo "ok   table ranks" || { echo "FAIL table ranks"; fail=1; }
# The op table: `call OP` prints the envelope; an unknown op is an error value (exit 2).
printf '%s' '{"model":"meta-llama/Llama-3.1-8B"}' | "$bin" call summary - | grep -q '^{"ok":true,"peak_allocated_bytes":' && echo "ok   call summary" || { echo "FAIL call summary"; fail=1; }
"$bin" call version | grep -q '^{"ok":true,"version":"0.1.0+' && echo "ok   call version" || { echo "FAIL call version"; fail=1; }
# The planner: `plan` prints the plans (JSON), `check` is the pre-launch guard (0 fits, 1 does not
# and prints the best plans, 2 bad input).
nofit='{"model":"Qwen/Qwen2.5-7B","mode":"train","train":{"method":"full","precision":"amp_bf16"},"gpu":"h100-sxm-80gb"}'
printf '%s' "$nofit" | "$bin" plan - | grep -q '"fits_as_is": false' && echo "ok   plan" || { echo "FAIL plan"; fail=1; }
code=0; out=$(printf '%s' "$nofit" | "$bin" check -) || code=$?
[ "$code" = 1 ] && grep -q "^  1\. " <<<"$out" && echo "ok   check does not fit" || { echo "FAIL check does not fit: $code $out"; fail=1; }
code=0; printf '%s' '{"model":"Qwen/Qwen2.5-0.5B","mode":"train","train":{"method":"lora","seq_len":512}}' | "$bin" check - >/dev/null || code=$?
[ "$code" = 0 ] && echo "ok   check fits" || { echo "FAIL check fits: $code"; fail=1; }
code=0; printf '%s' '{"model":"meta-llama/Llama-9-8B"}' | "$bin" check - >/dev/null 2>&1 || code=$?
[ "$code" = 2 ] && echo "ok   check bad input" || { echo "FAIL check bad input: $code"; fail=1; }
code=0; out=$("$bin" call nope) || code=$?
[ "$code" = 2 ] && grep -q '"code":"unknown_op"' <<<"$out" && echo "ok   call unknown op" || { echo "FAIL call unknown op: $code $out"; fail=1; }

# Hostile input (issue 11): exit 2, one short printable line per error, bounded output, no crash.
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
hostile() {  # hostile NAME MAX_STDERR_LINES EXPECTED_STDERR_SUBSTRING FILE [command]
  local code lines bytes
  "$bin" "${5:-estimate}" "$4" >"$tmp/out" 2>"$tmp/err"; code=$?
  lines=$(wc -l <"$tmp/err"); bytes=$(wc -c <"$tmp/err")
  if [ "$code" != 2 ] || [ "$lines" -gt "$2" ] || [ "$bytes" -gt $((2000 * $2)) ] || [ -s "$tmp/out" ] ||
     ! grep -qF -- "$3" "$tmp/err" || LC_ALL=C grep -q $'[\x01-\x09\x0b-\x1f\x7f]' "$tmp/err" ||
     LC_ALL=C grep -q $'\xc2[\x80-\x9f]' "$tmp/err" || grep -qv '^error: ' "$tmp/err"; then
    echo "FAIL $1: code=$code lines=$lines bytes=$bytes stderr=$(head -c 300 "$tmp/err")"; fail=1
  else
    echo "ok   $1"
  fi
}
nest() { python3 -c "import sys; d=int(sys.argv[1]); print('['*d + sys.argv[2] + ']'*d, end='')" "$@"; }
llama='"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"vocab_size":100,"intermediate_size":128'
printf '{"model":"meta-llama/Llama-3.1-8B","train":{"micro_batch_size":%s}}' "$(nest 100000 1)" >"$tmp/deep_int.json"
hostile deep_integer_field 1 "error: train.micro_batch_size[0][0]" "$tmp/deep_int.json"
printf '{"model":"meta-llama/Llama-3.1-8B","train":{"method":"lora","lora":{"targets":%s}}}' "$(nest 100000 '"q_proj"')" >"$tmp/deep_targets.json"
hostile deep_lora_targets 1 "more than 64 levels deep" "$tmp/deep_targets.json"
printf '{"model":{%s,"extra":%s}}' "$llama" "$(nest 100000 0)" >"$tmp/deep_cfg.json"
hostile deep_inline_config 1 "error: model.extra[0]" "$tmp/deep_cfg.json"
nest 100000 0 >"$tmp/deep_top.json"
hostile deep_top_level 1 "error: [0][0]" "$tmp/deep_top.json"
printf '{%s,"x":%s}' "$llama" "$(nest 100000 0)" >"$tmp/deep_config_cmd.json"
hostile deep_config_command 1 "error: model.x[0]" "$tmp/deep_config_cmd.json" config
printf '{"model":"meta-llama/Llama-3.1-8B","train":{"lora":{"alpha":1e400}}}' >"$tmp/inf.json"
hostile number_overflow 1 "error: train.lora.alpha: train.lora.alpha is a number beyond the range of a double" "$tmp/inf.json"
printf '%s' '{"model":"x\nerror: forged\u001b[31m\u009b2J"}' >"$tmp/forged_id.json"
hostile forged_model_id 1 'error: model: unknown preset "x\nerror: forged\u001B[31m\u009B2J"' "$tmp/forged_id.json"
printf '%s' '{"model":"meta-llama/Llama-3.1-8B","gpu":"\u001b]0;title\u0007","a\nerror: b":1}' >"$tmp/forged_gpu.json"
hostile forged_gpu_and_key 2 'error: a\nerror: b: unknown key "a\nerror: b"' "$tmp/forged_gpu.json"
python3 -c "import sys; sys.stdout.write('{\"model\":\"meta-llama/Llama-3.1-8B\",\"train\":{\"' + 'k'*3000000 + '\":1}}')" >"$tmp/long_key.json"
hostile long_key 1 "error: train: a key of 3000000 bytes" "$tmp/long_key.json"
python3 -c "import sys; sys.stdout.write('{\"model\":\"' + 'm'*60000 + '\"}')" >"$tmp/long_id.json"
hostile long_unknown_id 1 "error: model: unknown preset" "$tmp/long_id.json"
python3 -c "import sys; sys.stdout.write('{\"model\":\"' + 'm'*10000000 + '\"}')" >"$tmp/huge_id.json"
hostile huge_document 1 "error: the scenario is 10000012 bytes; at most 4194304 bytes" "$tmp/huge_id.json"
python3 -c "import sys; sys.stdout.write('{\"model\":\"meta-llama/Llama-3.1-8B\"' + ''.join(',\"k%d\":1' % i for i in range(10000)) + '}')" >"$tmp/many_keys.json"
hostile many_unknown_keys 20 "error: 9981 more problems not shown" "$tmp/many_keys.json"
# A config nested 60 deep (inside the limit) prints in proportion to its size (a 20 KB nested
# config used to print 200 MB).
printf '{"model":{%s,"extra":%s}}' "$llama" "$(nest 60 0)" >"$tmp/nested_ok.json"
bytes=$("$bin" estimate "$tmp/nested_ok.json" | wc -c)
[ "$bytes" -lt 200000 ] && echo "ok   nested_echo_bounded ($bytes bytes)" || { echo "FAIL nested_echo_bounded: $bytes bytes"; fail=1; }
# Launch configs: import prints the scenario (notes on stderr), export the config; the two round-trip.
printf '%s\n' 'vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 8192 --port 8000' >"$tmp/serve.sh"
out=$("$bin" import "$tmp/serve.sh" 2>"$tmp/notes.txt"); code=$?
[ "$code" = 0 ] && grep -q '"model": "Qwen/Qwen2.5-7B-Instruct"' <<<"$out" && grep -q '^note: \[ignored\] --port' "$tmp/notes.txt" \
  && echo "ok   import vllm" || { echo "FAIL import vllm: $code $out"; fail=1; }
printf '%s\n' 'finetuning_type: lora' 'lora_rank: eight' >"$tmp/bad.yaml"
code=0; err=$("$bin" import "$tmp/bad.yaml" 2>&1 >/dev/null) || code=$?
[ "$code" = 2 ] && grep -q '^error: lora_rank: expected an integer' <<<"$err" && echo "ok   import bad key" || { echo "FAIL import bad key: $code $err"; fail=1; }
printf '%s' '{"model":"meta-llama/Llama-3.1-8B","train":{"method":"qlora","micro_batch_size":2},"gpu":"rtx-4090-24gb"}' >"$tmp/job.json"
"$bin" export --to llamafactory "$tmp/job.json" >"$tmp/job.yaml" 2>/dev/null && grep -q '^finetuning_type: lora' "$tmp/job.yaml" \
  && grep -q '^# vramplan: {"gpu":"rtx-4090-24gb"}' "$tmp/job.yaml" && echo "ok   export llamafactory" || { echo "FAIL export llamafactory"; fail=1; }
"$bin" import "$tmp/job.yaml" 2>/dev/null >"$tmp/back.json" && a=$("$bin" call summary "$tmp/job.json" | grep -o '"device_total_bytes":[0-9]*') \
  && b=$("$bin" call summary "$tmp/back.json" | grep -o '"device_total_bytes":[0-9]*') && [ -n "$a" ] && [ "$a" = "$b" ] \
  && echo "ok   export/import round trip" || { echo "FAIL export/import round trip: $a vs $b"; fail=1; }
code=0; "$bin" export --to vllm "$tmp/job.json" >/dev/null 2>&1 || code=$?
[ "$code" = 2 ] && echo "ok   export wrong mode" || { echo "FAIL export wrong mode: $code"; fail=1; }
code=0; "$bin" export "$tmp/job.json" >/dev/null 2>&1 || code=$?
[ "$code" = 1 ] && echo "ok   export usage" || { echo "FAIL export usage: $code"; fail=1; }
exit $fail
