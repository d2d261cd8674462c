#!/usr/bin/env bash
# experiments/linear_suite.lua: --list point counts (49, 37, 68 and the
# nvfp4 suite's 15) and bytes, usage errors (no arguments, --profile with a
# suite, --policy a4 on a device without FP4, a bad shape), and on lavapipe a
# small sweep and single points of every qtype that run, pass the reference
# check and write the documented columns.
set -u
G=$1
. "$(dirname "$0")/lib.sh"
E=experiments/linear_suite.lua

for s in "qwen3_6_27b 49 14" "qwen3_6_35b_a3b 37 11" "all 68 19" "nvfp4 15 5"; do
  read -r name np ng <<<"$s"
  out=$("$G" $E --suite $name --list 2>&1); rc=$?
  check "--suite $name --list: $np points in $ng groups (rc=$rc)" \
    '[[ $rc -eq 0 ]] && grep -q "^$np points in $ng weight groups" <<<"$out" && [[ $(grep -Ec "^ +[0-9]+  " <<<"$out") -eq $np ]]'
done
out=$("$G" $E --suite all --list 2>&1)
check "all keeps both role labels of a shared Vision point" \
  'grep -Eq "27b\.vision_patch\+35b\.vision_patch +q6 +a16 +1152 +1536 +4 " <<<"$out"'
check "all keeps the two merger outputs apart" \
  'grep -Eq "27b\.vision_merger_fc2 +w8 +a16 +5120 +4608" <<<"$out" && grep -Eq "35b\.vision_merger_fc2 +w8 +a16 +2048 +4608" <<<"$out"'
out=$("$G" $E --qtype q4 --n 4096 --k 5120 --t 1 --list 2>&1)
check "Q4 4096x5120: 11141120 weight bytes, 11159552 model bytes at T=1" \
  'grep -Eq " q4 +a16 +4096 +5120 +1 +11141120 +11159552$" <<<"$out"'
out=$("$G" $E --qtype q5 --n 1152 --k 4304 --t 4 --list 2>&1)
check "K=4304 pads to 4352: Q5 weight bytes 1152*4352/64*42" \
  'grep -Eq " 1152 +4304 +4 +$((1152 * 4352 / 64 * 42)) " <<<"$out"'
out=$("$G" $E --qtype bf16 --n 14336 --k 5120 --sweep 1:8:3 --list 2>&1)
check "a sweep lists T = 1, 4, 7" '[[ $(grep -Ec " bf16 +a16 +14336 +5120 +(1|4|7) " <<<"$out") -eq 3 ]] && grep -q "^3 points" <<<"$out"'

usage() { # name, expected message, args...
  local name=$1 msg=$2; shift 2
  out=$("$@" 2>&1); rc=$?
  check "$name: exit 2 with \"$msg\" (rc=$rc: $(head -c 300 <<<"$out"))" '[[ $rc -eq 2 ]] && grep -qF -- "$msg" <<<"$out"'
}
usage "no arguments print usage" "usage: gpubench experiments/linear_suite.lua" "$G" $E
usage "--profile with a suite" "--profile takes exactly one point (--qtype, --n, --k, --t), not a suite" "$G" $E --suite all --profile
usage "--profile with a sweep" "--profile takes exactly one point" "$G" $E --qtype q4 --n 64 --k 128 --sweep 1:4:1 --profile
usage "K not a multiple of 8" "K=5121 must be a multiple of 8" "$G" $E --qtype q4 --n 4096 --k 5121 --t 1 --list
usage "a4 on a non-nvfp4 qtype" "policy a4 (FP4 activations) is for nvfp4 weights only, not q4" "$G" $E --qtype q4 --policy a4 --n 64 --k 128 --t 1 --list
usage "T and a sweep" "give one of --t T (a single point) or --sweep S:E:STEP" "$G" $E --qtype q4 --n 64 --k 128 --t 1 --sweep 1:2:1
usage "a bad sweep" "--sweep 4:1:1 must be S:E:STEP" "$G" $E --qtype q4 --n 64 --k 128 --sweep 4:1:1
usage "a suite with a shape" "--suite runs its own points: drop --n" "$G" $E --suite all --n 5
usage "missing --k" "--k required (or --suite)" "$G" $E --qtype q4 --n 64 --t 1
usage "an unknown qtype" "--qtype" "$G" $E --qtype q3 --n 64 --k 128 --t 1

# On a device (lavapipe in CI): a4 refused with the device named, then real runs.
out=$("$G" $E --backend vulkan --qtype nvfp4 --policy a4 --n 64 --k 128 --t 1 2>&1); rc=$?
if [[ $rc -eq 77 ]] || grep -q "no Vulkan device\|cannot open" <<<"$out"; then
  echo "$pass passed, $fail failed (no Vulkan device: device cases skipped)"; ((fail == 0)); exit $?
fi
check "a4 without FP4 tensor cores: exit 2 naming the device (rc=$rc: $out)" \
  '[[ $rc -eq 2 ]] && grep -q "policy a4 needs FP4 tensor cores (sm_100 or later); .* is not an NVIDIA architecture (vulkan)" <<<"$out"'

out=$("$G" $E --backend vulkan --qtype q4 --n 100 --k 200 --sweep 1:3:1 --samples 3 --json "$tmp/sweep.jsonl" \
  --csv "$tmp/sweep.csv" 2>&1); rc=$?
check "a small Q4 sweep runs (rc=$rc: $(tail -n 5 <<<"$out"))" '[[ $rc -eq 0 ]]'
check "the console header" 'grep -q "dram_spec=.* sustained_read=.* cache=cold" <<<"$out"'
check "three ok rows in the JSON, checked against the reference" \
  '[[ $(grep -c "\"type\":\"cell\"" "$tmp/sweep.jsonl") -eq 3 ]] && [[ $(grep -c "\"status\":\"ok\"" "$tmp/sweep.jsonl") -eq 3 ]] \
   && [[ $(grep -c "\"check_failures\":0" "$tmp/sweep.jsonl") -eq 3 ]]'
check "every sample kept (3 per point)" \
  '[[ $(grep -Eo "\"samples_us\":\[[^]]*\]" "$tmp/sweep.jsonl" | awk -F, "NF==3" | wc -l) -eq 3 ]]'
check "delta_% from the second point on" '[[ $(grep -Ec "\"delta_pct\":-?[0-9]" "$tmp/sweep.jsonl") -eq 2 ]]'
check "the CSV has the contract's columns" \
  'grep -v "^#" "$tmp/sweep.csv" | head -n 1 | grep -q "label,qtype,policy,n,k,t,median_us,min_us,p95_us,model_gb,effective_gbs,dram_pct,read_pct,useful_tflops,memory_floor_pct"'
# B/A: every point timed a second time after its group; unsteady exactly where the two differ by > 10 %
ba=$("$G" -e 'local r = require "gpubench.report"; local lb = require "gpubench.linear_bench"
  local n, bad = 0, 0
  for _, c in ipairs(r.read_jsonl("'"$tmp/sweep.jsonl"'")) do
    if c.type == "cell" then
      n = n + 1
      local want = math.abs(c.retime_us / c.median_us - 1) > lb.RETIME_TOLERANCE
      if math.abs(c.retime_ratio - c.retime_us / c.median_us) > 1e-9 or (c.unsteady == true) ~= want then bad = bad + 1 end
    end
  end
  print(n, bad)' 2>&1)
check "B/A: each row timed twice, unsteady exactly past 10 % ($ba)" '[[ "$ba" == "3"$'"'"'\t'"'"'"0" ]]'
check "B/A: the footer says how many rows are unsteady" 'grep -q "B/A: each point timed again after its group, in reverse order" <<<"$out"'
# the timer's fixed cost against each median: fixed_share exact, fixed_bound exactly past FIXED_SHARE, and a note
fx=$("$G" -e 'local r = require "gpubench.report"; local lb = require "gpubench.linear_bench"
  local n, bad = 0, 0
  for _, c in ipairs(r.read_jsonl("'"$tmp/sweep.jsonl"'")) do
    if c.type == "cell" then
      n = n + 1
      if math.abs(c.fixed_share - c.fixed_us / c.median_us) > 1e-9
        or (c.fixed_bound == true) ~= (c.fixed_us / c.median_us > lb.FIXED_SHARE) then bad = bad + 1 end
    end
  end
  print(n, bad)' 2>&1)
check "fixed cost: fixed_share and fixed_bound on every row ($fx)" '[[ "$fx" == "3"$'"'"'\t'"'"'"0" ]]'
check "fixed cost: the footer gives it and counts the rows it bounds" \
  'grep -Eq "^\* fixed cost: an empty kernel timed as these samples are takes [0-9.]+ us .* at [0-3] of 3 rows" <<<"$out"'
out=$("$G" $E --backend vulkan --qtype q4 --n 100 --k 200 --t 1 --samples 3 --retime off --json "$tmp/once.jsonl" 2>&1); rc=$?
check "--retime off: one timing per point, no B/A (rc=$rc)" \
  '[[ $rc -eq 0 ]] && ! grep -q "retime_ratio" "$tmp/once.jsonl" && ! grep -q "B/A" <<<"$out" && grep -q "\"status\":\"ok\"" "$tmp/once.jsonl"'
check "the byte breakdown and warm-up in the CSV" \
  'grep -v "^#" "$tmp/sweep.csv" | head -n 1 | grep -q "weight_bytes" && grep -v "^#" "$tmp/sweep.csv" | head -n 1 | grep -q "warmup"'

for q in q4 q5 q6 w8 nvfp4 bf16; do
  out=$("$G" $E --backend vulkan --qtype $q --n 37 --k 200 --t 17 --samples 2 --warmup 1 --json "$tmp/$q.jsonl" 2>&1); rc=$?
  check "$q 37x200 T=17 passes the reference check and is timed (rc=$rc: $(tail -n 3 <<<"$out"))" \
    '[[ $rc -eq 0 ]] && grep -q "\"check_failures\":0" "$tmp/$q.jsonl" && grep -q "\"status\":\"ok\"" "$tmp/$q.jsonl"'
done
check "the wall time is broken down" 'grep -q "reference checks .* s, our timings .* s" <<<"$out"'

# experiments/linear_variants.lua: the table's geometry and the swept ones, each checked, ABBA
V=experiments/linear_variants.lua
out=$("$G" --backend vulkan $V --qtype q5 --n 96 --k 256 --t 1,2 --grid "LIN_NR=1,2" --samples 3 --json "$tmp/var.jsonl" 2>&1); rc=$?
check "linear_variants runs (rc=$rc: $(tail -n 3 <<<"$out"))" '[[ $rc -eq 0 ]]'
check "linear_variants: per T one table row and the other NR, all ok, both rounds timed" \
  '[[ $(grep -c "\"variant\":\"table \*\"" "$tmp/var.jsonl") -eq 2 ]] && [[ $(grep -c "\"variant\":\"NR=" "$tmp/var.jsonl") -eq 2 ]] \
   && [[ $(grep -c "\"status\":\"ok\"" "$tmp/var.jsonl") -eq $(grep -c "\"type\":\"cell\"" "$tmp/var.jsonl") ]] \
   && [[ $(grep -c "\"us_b\":" "$tmp/var.jsonl") -eq $(grep -c "\"type\":\"cell\"" "$tmp/var.jsonl") ]]'
out=$("$G" --backend vulkan $V --qtype w8 --n 96 --k 256 --t 1 --route dot --grid "LIN_DOT=0,1;LIN_NR=3,4" --samples 3 --json "$tmp/dot.jsonl" 2>&1); rc=$?
check "linear_variants: the dot route against gemv (LIN_DOT=0,1), each checked and timed (rc=$rc: $(tail -n 3 <<<"$out"))" \
  '[[ $rc -eq 0 ]] && [[ $(grep -c "\"type\":\"cell\"" "$tmp/dot.jsonl") -eq 5 ]] \
   && [[ $(grep -c "\"LIN_DOT\":0" "$tmp/dot.jsonl") -eq 2 ]] \
   && [[ $(grep -c "\"status\":\"ok\"" "$tmp/dot.jsonl") -eq 5 ]]'
out=$("$G" --backend vulkan $V --qtype bf16 --n 96 --k 256 --t 1 --route gemv --grid "LIN_DOT=1" 2>&1); rc=$?
check "linear_variants: bf16 has no dot route (rc=$rc: $out)" \
  '[[ $rc -ne 0 ]] && grep -q "bf16 has no integer-dot route" <<<"$out"'
out=$("$G" --backend vulkan $V --qtype q4 --n 96 --k 256 --grid "LN_BOGUS=1" 2>&1); rc=$?
check "linear_variants refuses a define the route lacks (rc=$rc: $out)" \
  '[[ $rc -eq 2 ]] && grep -q "linear_variants: the gemv route has no define LN_BOGUS" <<<"$out"'
out=$("$G" --backend vulkan $V --qtype q4 --n 96 --k 256 --grid "TAIL=0,4" 2>&1); rc=$?
check "linear_variants: TAIL (the last wave in slices) is the wgmma route's (rc=$rc: $out)" \
  '[[ $rc -eq 2 ]] && grep -q "linear_variants: TAIL (the last wave in slices) is the wgmma route" <<<"$out"'
out=$("$G" --backend vulkan $V --qtype q4 --n 96 --k 256 --grid "PREP_HOLD=0,12" 2>&1); rc=$?
check "linear_variants: PREP_HOLD (the prepass's rows held) is the wgmma route's (rc=$rc: $out)" \
  '[[ $rc -eq 2 ]] && grep -q "linear_variants: PREP_HOLD (the prepass.s chunks of x held a thread) is the wgmma route" <<<"$out"'
out=$("$G" --backend vulkan $V --qtype q4 --n 96 --k 256 --grid "TAILS=4" 2>&1); rc=$?
check "linear_variants: a grid name neither a define nor TAIL nor PREP_HOLD (rc=$rc: $out)" \
  '[[ $rc -eq 2 ]] && grep -q "is not NAME=v1,v2,... (a route define, TAIL: .*, or PREP_HOLD" <<<"$out"'
out=$("$G" --backend vulkan $V --qtype q4 --n 96 --k 256 --route mma 2>&1); rc=$?
check "linear_variants: --route mma is CUDA's (rc=$rc: $out)" '[[ $rc -eq 2 ]] && grep -q "route mma is CUDA" <<<"$out"'
out=$("$G" --backend vulkan $V --qtype q4 --n 96 --k 256 --versus wgmma 2>&1); rc=$?
check "linear_variants: --versus wgmma is CUDA's (rc=$rc: $out)" '[[ $rc -eq 2 ]] && grep -q "route wgmma is CUDA" <<<"$out"'
out=$("$G" --backend vulkan $V --qtype q4 --n 96 --k 256 --t 1 --route gemv --grid "LIN_NR=1" --versus dot --samples 3 --json "$tmp/vs.jsonl" 2>&1); rc=$?
check "linear_variants --versus dot: the dot route timed in the same rounds, checked (rc=$rc: $(tail -n 3 <<<"$out"))" \
  '[[ $rc -eq 0 ]] && [[ $(grep -c "\"type\":\"cell\"" "$tmp/vs.jsonl") -eq 3 ]] \
   && [[ $(grep -c "\"variant\":\"route dot\"" "$tmp/vs.jsonl") -eq 1 ]] && grep "route dot" "$tmp/vs.jsonl" | grep -q "\"LIN_DOT\":1" \
   && [[ $(grep -c "\"status\":\"ok\"" "$tmp/vs.jsonl") -eq 3 ]] && [[ $(grep -c "\"tflops\":" "$tmp/vs.jsonl") -eq 3 ]]'

summary
