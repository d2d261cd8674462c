#!/usr/bin/env bash
# --shard I/N on every experiment, and the Slurm job array run as local
# processes: each experiment's cell list (--list-cells, or --list) for every
# shard is exactly the cells at 0-based positions p with p mod N = I, so the
# shards partition it; a table run as 3 shards through scripts/slurm/
# (shard_array.sbatch with the SLURM_ARRAY_* variables set, then
# merge.sbatch) merges into the cells of the unsharded run; a shard holds
# the same cells in any --order; and tools/merge_results.lua refuses
# missing, repeated, foreign and unfinished shards with exit status 2.
set -u
G=$1
. "$(dirname "$0")/lib.sh"

# partition NAME N CMD...: CMD prints the full list; CMD --shard I/N each shard.
# Each shard must be the lines at positions p (0-based) with p mod N = I.
partition() {
  local name=$1 n=$2; shift 2
  "$@" >"$tmp/full" 2>"$tmp/err" || { check "$name: the full list (rc=$?: $(head -c 300 "$tmp/err"))" false; return; }
  local total; total=$(wc -l <"$tmp/full")
  : >"$tmp/union"
  local ok=true
  for ((i = 0; i < n; i++)); do
    "$@" --shard "$i/$n" >"$tmp/s$i" 2>"$tmp/err" || { ok=false; echo "  shard $i/$n: rc=$?: $(head -c 300 "$tmp/err")"; }
    awk -v i="$i" -v n="$n" '(NR - 1) % n == i' "$tmp/full" >"$tmp/want"
    cmp -s "$tmp/s$i" "$tmp/want" || { ok=false; echo "  shard $i/$n differs from the rule:"; diff "$tmp/s$i" "$tmp/want" | head -5; }
    cat "$tmp/s$i" >>"$tmp/union"
  done
  check "$name: $n shards of $total cells follow p mod N, union = the list, no cell twice" \
    '$ok && [[ $total -gt 0 ]] && [[ $(sort "$tmp/union" | md5sum) == $(sort "$tmp/full" | md5sum) ]] && [[ $(wc -l <"$tmp/union") -eq $total ]]'
}

# Without a device: moe_scaling --list and linear_suite --list (their rows, index column included).
# (a listing's columns are as wide as its rows: compared with runs of blanks squeezed)
moe_list() { "$G" experiments/moe_scaling.lua --config ferrum_subset --m 1,2,4 --list "$@" | tail -n +4 | tr -s " "; }
partition "moe_scaling --list" 4 moe_list
linear_list() { "$G" experiments/linear_suite.lua --suite qwen3_6_27b --list "$@" | sed -n '3,$p' | grep -v "points in" | tr -s " "; }
partition "linear_suite --list (49 points)" 5 linear_list
partition "linear_suite --list, one shard per point" 49 linear_list
out=$("$G" experiments/linear_suite.lua --suite qwen3_6_27b --list --shard 2/10 | awk 'NR > 2 && $1 ~ /^[0-9]+$/ && $2 != "points" {print $1}' | paste -sd,)
check "linear_suite --list's # column is the place in the whole suite ($out)" '[[ $out == 3,13,23,33,43 ]]'

if ! "$G" -e 'require "gpu".open{backend = "vulkan"}' >/dev/null 2>&1; then
  if [[ "${CI:-}" == true ]]; then echo "FAIL: no Vulkan device in CI"; exit 1; fi
  echo "$pass passed, $fail failed (no Vulkan device: device cases skipped)"; ((fail == 0)); exit $?
fi
V="--backend vulkan"
bw() { "$G" $V experiments/bandwidth.lua --sizes 64K,128K,256K,512K,1M "$@"; }
partition "bandwidth --list-cells" 3 bw --list-cells
gemv() { M=64 K=256 "$G" $V experiments/gemv_table.lua --list-cells "$@"; }
partition "gemv_table --list-cells" 3 gemv
partition "gemv_table --list-cells, more shards than cells" 11 gemv
variants() { M=64 K=256 "$G" $V experiments/gemv_variants.lua --kernels q4_0,q8_0 --list-cells "$@" 2>/dev/null; }
partition "gemv_variants --list-cells" 4 variants
moe_cells() { "$G" $V experiments/moe_scaling.lua --config ferrum_subset --m 1,2 --regime l2 --list-cells "$@"; }
partition "moe_scaling --list-cells" 3 moe_cells
swiglu() { "$G" $V experiments/swiglu_ab.lua --regime l2 --list-cells "$@"; }
partition "swiglu_ab --list-cells" 6 swiglu

# ---------------------------------------------------------------- the Slurm array, as local processes
small=(experiments/bandwidth.lua --sizes 64K,128K,256K --iters 4 --rounds 1)
"$G" $V "${small[@]}" --json "$tmp/whole.jsonl" >/dev/null 2>"$tmp/err"; rc=$?
check "the unsharded run (rc=$rc: $(head -c 300 "$tmp/err"))" '[[ $rc -eq 0 ]]'
# --array=1-3: task ids 1..3, shards 0..2
for id in 1 2 3; do
  SLURM_ARRAY_JOB_ID=42 SLURM_ARRAY_TASK_ID=$id SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_COUNT=3 \
    GPUBENCH="$G" GPUBENCH_OUT="$tmp/array" bash scripts/slurm/shard_array.sbatch $V "${small[@]}" \
    >"$tmp/task$id.log" 2>&1 &
done
wait
check "three array tasks wrote shard-0..2.jsonl" '[[ -s $tmp/array/shard-0.jsonl && -s $tmp/array/shard-1.jsonl && -s $tmp/array/shard-2.jsonl ]]'
GPUBENCH="$G" GPUBENCH_OUT="$tmp/array" bash scripts/slurm/merge.sbatch >"$tmp/merge.log" 2>&1; rc=$?
check "merge.sbatch merges them (rc=$rc: $(cat "$tmp/merge.log"))" \
  '[[ $rc -eq 0 ]] && grep -q "3 shards of bandwidth, 6 cells (6 rows)" "$tmp/merge.log"'

cat >"$tmp/cells.lua" <<'EOF'
-- prints "cell_index label" per cell of a JSON-lines file, and the environment's shard
local r = require("gpubench.report").read_jsonl(arg[1])
local s = r[1].shard
print(("shard %d/%d of %d cells%s"):format(s.index, s.count, s.cells, s.merged_from and (" from %d"):format(s.merged_from) or ""))
for _, x in ipairs(r) do
  if x.type == "cell" then print(("%d %s %s"):format(x.cell_index, x.label, x.shard ~= nil and tostring(x.shard) or "-")) end
end
EOF
"$G" "$tmp/cells.lua" "$tmp/whole.jsonl" >"$tmp/whole.cells"
"$G" "$tmp/cells.lua" "$tmp/array/merged.jsonl" >"$tmp/merged.cells"
check "the unsharded run is shard 0/1 of 6 cells" '[[ $(head -1 "$tmp/whole.cells") == "shard 0/1 of 6 cells" ]]'
check "the merged file is the whole table, merged from 3" '[[ $(head -1 "$tmp/merged.cells") == "shard 0/1 of 6 cells from 3" ]]'
check "merging restores the unsharded run's cells, in table order" \
  '[[ $(tail -n +2 "$tmp/merged.cells" | cut -d" " -f1-3 | md5sum) == $(tail -n +2 "$tmp/whole.cells" | cut -d" " -f1-3 | md5sum) ]]'
check "each merged row names its shard: (cell_index - 1) mod 3" \
  '[[ $(tail -n +2 "$tmp/merged.cells" | awk "{ if (\$NF != ((\$1 - 1) % 3) \"/3\") bad++ } END { print bad + 0 }") == 0 ]]'
check "each shard file's environment records its shard" \
  '[[ $("$G" "$tmp/cells.lua" "$tmp/array/shard-1.jsonl" | head -1) == "shard 1/3 of 6 cells" ]]'
check "the merged rows carry the device columns" \
  'grep -q "\"device_name\":\"llvmpipe" "$tmp/array/merged.jsonl" && grep -q "\"device\":0" "$tmp/array/merged.jsonl"'

"$G" $V "${small[@]}" --shard 1/3 --order reverse --json "$tmp/rev.jsonl" >/dev/null 2>&1
check "a shard holds the same cells in reverse order" \
  '[[ $("$G" "$tmp/cells.lua" "$tmp/rev.jsonl" | tail -n +2 | sort | md5sum) == $("$G" "$tmp/cells.lua" "$tmp/array/shard-1.jsonl" | tail -n +2 | sort | md5sum) ]]'

# ---------------------------------------------------------------- refusals
M="$G tools/merge_results.lua"
refused() { # refused NAME MESSAGE FILES...
  local name=$1 msg=$2; shift 2
  local out rc
  out=$($M "$@" -o "$tmp/x.jsonl" 2>&1); rc=$?
  check "$name: exit 2, \"$msg\" (rc=$rc: $out)" '[[ $rc -eq 2 ]] && [[ $out == "gpubench: $msg" ]] && [[ ! -e $tmp/x.jsonl ]]'
}
A=$tmp/array
refused "a missing shard" "merge: shard 1/3 is missing (the files hold 0/3, 2/3)" "$A/shard-0.jsonl" "$A/shard-2.jsonl"
refused "a shard twice" "merge: $A/shard-1.jsonl and $A/shard-1.jsonl are both shard 1/3: overlapping shards" \
  "$A/shard-0.jsonl" "$A/shard-1.jsonl" "$A/shard-1.jsonl" "$A/shard-2.jsonl"
"$G" $V experiments/bandwidth.lua --sizes 64K,128K,256K --iters 8 --rounds 1 --shard 1/3 --json "$tmp/iters.jsonl" >/dev/null 2>&1
refused "other options" "merge: $tmp/iters.jsonl differs from $A/shard-0.jsonl in --iters: 8 vs 4 (only --shard, --device, --devices, --devices-mode and the output files may differ)" \
  "$A/shard-0.jsonl" "$tmp/iters.jsonl" "$A/shard-2.jsonl"
M=64 K=256 ITERS=4 "$G" $V experiments/gemv_table.lua --kernels q4_0,f32 --rounds 1 --shard 1/3 --json "$tmp/gemv.jsonl" >/dev/null 2>&1
refused "another experiment" "merge: $tmp/gemv.jsonl is a run of gemv_table, $A/shard-0.jsonl of bandwidth: files of different experiments" \
  "$A/shard-0.jsonl" "$tmp/gemv.jsonl" "$A/shard-2.jsonl"
"$G" $V "${small[@]}" --shard 1/2 --json "$tmp/half.jsonl" >/dev/null 2>&1
refused "another split" "merge: $A/shard-0.jsonl is shard 0/3 but $tmp/half.jsonl is shard 1/2: shards of different splits" \
  "$A/shard-0.jsonl" "$tmp/half.jsonl"
sed 's/"interrupted":false/"interrupted":true/' "$A/shard-1.jsonl" >"$tmp/stopped.jsonl"
refused "an interrupted shard" "merge: $tmp/stopped.jsonl was interrupted: run its shard again" \
  "$A/shard-0.jsonl" "$tmp/stopped.jsonl" "$A/shard-2.jsonl"
grep -v '"type":"end"' "$A/shard-1.jsonl" >"$tmp/killed.jsonl"
refused "a killed shard" "merge: $tmp/killed.jsonl has no end record: its run did not finish (a killed run's cells are in FILE.partial)" \
  "$A/shard-0.jsonl" "$tmp/killed.jsonl" "$A/shard-2.jsonl"
out=$($M "$A/shard-0.jsonl" 2>&1); rc=$?
check "merge_results without -o: exit 2 ($out)" '[[ $rc -eq 2 && $out == "gpubench: merge_results: -o FILE (the merged file) is required" ]]'
rm -rf "$A"
GPUBENCH="$G" GPUBENCH_OUT="$A" bash scripts/slurm/merge.sbatch >"$tmp/empty.log" 2>&1; rc=$?
check "merge.sbatch over no shard file: exit 2 (rc=$rc)" '[[ $rc -eq 2 ]] && grep -q "no shard-\*.jsonl in" "$tmp/empty.log"'
out=$(bash scripts/slurm/shard_array.sbatch experiments/bandwidth.lua 2>&1); rc=$?
check "shard_array.sbatch outside an array says so (rc=$rc)" '[[ $rc -ne 0 ]] && grep -q "not an array task" <<<"$out"'

summary
