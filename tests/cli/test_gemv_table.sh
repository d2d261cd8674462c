#!/usr/bin/env bash
# experiments/gemv_table.lua end to end on the Vulkan device CI has (lavapipe):
# a tiny custom shape (M=64 K=256 ITERS=4) must give one row per format, every
# kernel checked against the FP64 oracle, in the requested order, with the
# seed's columns; and bad knobs must stop the run before any GPU work.
set -u
G=$1
. "$(dirname "$0")/lib.sh"

if ! "$G" -e 'require "gpu".open{backend = "vulkan"}' >/dev/null 2>&1; then
  if [[ "${CI:-}" == true ]]; then echo "FAIL: no Vulkan device in CI"; exit 1; fi
  echo "skipped: no Vulkan device"; exit 77
fi

out=$(M=64 K=256 ITERS=4 "$G" --backend vulkan experiments/gemv_table.lua \
        --json "$tmp/t.jsonl" --csv "$tmp/t.csv" 2>"$tmp/err"); rc=$?
check "tiny table exits 0 (rc=$rc: $(head -c 300 "$tmp/err"))" '[[ $rc -eq 0 ]]'
check "header has the seed's columns" 'grep -Eq "^kernel +shape +m +k +ms +GB/s +% peak\* +% read +fits" <<<"$out"'
for fmt in q4_k q5_k q4_0 q8_0 f32 q6_k f16 bf16; do
  check "row for $fmt" 'grep -Eq "^$fmt +custom +64 +256 +([0-9.]+|noise) " <<<"$out"'
done
check "rows in the seed's kernel order" \
  '[[ $(grep -Eo "^(q4_k|q5_k|q4_0|q8_0|f32|q6_k|f16|bf16) " <<<"$out" | tr -d " " | paste -sd,) == q4_k,q5_k,q4_0,q8_0,f32,q6_k,f16,bf16 ]]'
check "footer names the peak and the read ceiling" 'grep -q "% read: of" <<<"$out" && grep -q "% peak: of" <<<"$out"'
check "footer says the kernels matched the oracle" 'grep -q "matched the FP64 oracle" <<<"$out"'
check "JSON: environment + 8 cells" '[[ $(grep -c "\"type\":\"cell\"" "$tmp/t.jsonl") -eq 8 && $(grep -c "\"type\":\"environment\"" "$tmp/t.jsonl") -eq 1 ]]'
check "JSON cells carry the oracle error below 1e-4" \
  '"$G" -e "local r = require \"gpubench.report\".read_jsonl(\"$tmp/t.jsonl\"); local n = 0
           for _, c in ipairs(r) do if c.type == \"cell\" then assert(c.max_rel_err < 1e-4); n = n + 1 end end
           assert(n == 8)"'
check "CSV: header + 8 rows" '[[ $(grep -vc "^#" "$tmp/t.csv") -eq 9 ]]'
check "CSV: the environment in a commented header" 'grep -q "^# device: " "$tmp/t.csv"'

out=$(M=64 K=256 ITERS=4 "$G" --backend vulkan experiments/gemv_table.lua --order reverse --kernels q4_0,f32 2>&1); rc=$?
check "reverse order runs f32 before q4_0" '[[ $rc -eq 0 && $(grep -Eo "^(q4_0|f32) " <<<"$out" | tr -d " " | paste -sd,) == f32,q4_0 ]]'

out=$(K=1000 "$G" experiments/gemv_table.lua 2>&1); rc=$?
check "K=1000 is a usage error naming K (rc=$rc)" '[[ $rc -eq 2 ]] && grep -q "K=1000" <<<"$out" && grep -q "multiple of 256" <<<"$out"'
out=$(ITERS=100O "$G" experiments/gemv_table.lua 2>&1); rc=$?
check "ITERS=100O is a usage error (rc=$rc)" '[[ $rc -eq 2 ]] && grep -q "ITERS=100O" <<<"$out"'
out=$(ITERS=0 "$G" experiments/gemv_table.lua 2>&1); rc=$?
check "ITERS=0 is a usage error (rc=$rc)" '[[ $rc -eq 2 ]] && grep -q "ITERS=0" <<<"$out"'
out=$(PEAK_GBS=nan "$G" experiments/gemv_table.lua 2>&1); rc=$?
check "PEAK_GBS=nan is a usage error (rc=$rc)" '[[ $rc -eq 2 ]] && grep -q "PEAK_GBS=nan" <<<"$out"'
out=$(M=64 K=256 "$G" --backend vulkan experiments/gemv_table.lua --rotate 2>&1); rc=$?
check "--rotate without a known L2 is refused (rc=$rc)" '[[ $rc -eq 2 ]] && grep -q "L2 size" <<<"$out"'
# The refusal comes before any device work: the read ceiling (a device
# measurement, slow on lavapipe) must not have been probed or cached first.
mkdir -p "$tmp/cache"
out=$(GPUBENCH_CACHE_DIR="$tmp/cache" M=64 K=256 "$G" --backend vulkan experiments/gemv_table.lua --rotate 2>&1); rc=$?
check "--rotate is refused before the read-ceiling probe (rc=$rc)" \
  '[[ $rc -eq 2 ]] && ! grep -q "measuring the read ceiling" <<<"$out" && [[ ! -e "$tmp/cache/ceilings.json" ]]'
# A variant of two launches per call (GEMV_XPRE=1: x quantized in a first dispatch) is timed as one
# call and says so: the JSON row's launches, and a note naming it; the one-launch variant has 1. Its
# workspace grows from the T = 2 cell to the T = 8 one, armed before either is timed: the T = 2
# cell's launches keep their smaller buffer (a freed one fails the run: "use of a released gpu.buffer").
out=$(M=64 K=256 ITERS=2 "$G" --backend vulkan experiments/gemv_variants.lua --rounds 1 --kernels q4_k \
        --grid "GEMV_TOKENS=2;GEMV_IDOT=1;GEMV_XPRE=0,1|GEMV_TOKENS=8;GEMV_IDOT=1;GEMV_XPRE=1" --json "$tmp/v.jsonl" \
        2>"$tmp/verr"); rc=$?
check "gemv_variants GEMV_XPRE=0,1 at T = 2 and 1 at T = 8 runs (rc=$rc: $(head -c 300 "$tmp/verr"))" '[[ $rc -eq 0 ]]'
check "the two-launch variants are named in a note" \
  'grep -q "^\* two launches per call, both timed (x quantized once in a first launch): q4_k GEMV_TOKENS=2 GEMV_IDOT=1 GEMV_XPRE=1; q4_k GEMV_TOKENS=8 GEMV_IDOT=1 GEMV_XPRE=1$" <<<"$out"'
check "JSON rows: launches 1, 2 and 2" \
  '[[ $(grep -o "\"launches\":[0-9]" "$tmp/v.jsonl" | sort | paste -sd,) == "\"launches\":1,\"launches\":2,\"launches\":2" ]]'
# Launch overlap is CUDA's (sm_90+): on a Vulkan device the flag stops the run, naming the device,
# before any device work (gemv_variants and swiglu_ab share the check: options.require_overlap).
mkdir -p "$tmp/cache2"
for exp in gemv_table gemv_variants swiglu_ab; do
  out=$(GPUBENCH_CACHE_DIR="$tmp/cache2" M=64 K=256 "$G" --backend vulkan experiments/$exp.lua --overlap 2>&1); rc=$?
  check "$exp --overlap on Vulkan is refused (rc=$rc: $(head -c 200 <<<"$out"))" \
    '[[ $rc -eq 2 ]] && grep -q "^gpubench: --overlap: launch overlap needs programmatic dependent launch (CUDA, sm_90 or later); .* (vulkan) has none$" <<<"$out" && [[ ! -e "$tmp/cache2/ceilings.json" ]]'
done
summary
