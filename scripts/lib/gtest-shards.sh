# Sourced by scripts/test: runs a GoogleTest binary as GTEST_TOTAL_SHARDS shards, nproc at a time
# (GoogleTest's own sharding: every test runs in exactly one shard). One process per shard instead
# of ctest's one per test: ~500 process starts cost more than the tests under ASan (ctest -j2:
# 247 s; 2 shards: 84 s on the same tree). Prints each failing shard's output; fails if one fails.
run_gtest_shards() {  # run_gtest_shards BINARY [SHARDS]
  local bin="$1" shards="${2:-4}" dir pids=() failed=0 i
  dir="$(mktemp -d)"
  for ((i = 0; i < shards; i++)); do
    while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do sleep 0.2; done
    GTEST_TOTAL_SHARDS="$shards" GTEST_SHARD_INDEX="$i" "$bin" --gtest_brief=1 >"$dir/$i.log" 2>&1 &
    pids[i]=$!
  done
  for ((i = 0; i < shards; i++)); do
    if wait "${pids[i]}"; then
      tail -n 3 "$dir/$i.log" | sed "s/^/shard $i: /"
    else
      echo "shard $i of $shards failed:"; cat "$dir/$i.log"; failed=1
    fi
  done
  rm -rf "$dir"
  return "$failed"
}
