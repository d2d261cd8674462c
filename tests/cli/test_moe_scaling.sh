#!/usr/bin/env bash
# experiments/moe_scaling.lua: --list without device work (cells, dispatch
# counts per step: per_token m, batched and fused 1, grouped 2 on CUDA and 1
# on Vulkan; unique experts and bytes), usage errors before any device work,
# and on lavapipe ferrum_subset at m = 1, 2: every variant checked against
# the FP64 reference and batched against per_token before timing, the
# documented columns, and the plot.
set -u
G=$1
. "$(dirname "$0")/lib.sh"
E=experiments/moe_scaling.lua

# --list: no device is opened (a CUDA list on this machine works without a GPU) and no ceiling is probed
mkdir -p "$tmp/cache"
out=$(GPUBENCH_CACHE_DIR="$tmp/cache" "$G" $E --backend cuda --config ferrum_subset --m 1,2,4 --list 2>&1); rc=$?
check "--list exits 0 (rc=$rc: $(head -c 300 <<<"$out"))" '[[ $rc -eq 0 ]]'
check "--list: 2 regimes x 4 variants x 3 m = 24 cells" '[[ $(grep -Ec "^(per_token|batched|grouped|fused_gate_up) gate_up (cold|l2) m=" <<<"$out") -eq 24 ]]'
check "--list did no device work" '[[ ! -e "$tmp/cache/ceilings.json" ]] && ! grep -q "measuring the read ceiling" <<<"$out"'
check "per_token: m dispatches per step" \
  'grep -Eq "^per_token gate_up l2 m=1 +8 +1 " <<<"$out" && grep -Eq "^per_token gate_up l2 m=4 +32 +4 " <<<"$out"'
check "batched and fused_gate_up: 1 dispatch" \
  'grep -Eq "^batched gate_up cold m=4 +32 +1 " <<<"$out" && grep -Eq "^fused_gate_up gate_up cold m=4 +32 +1 " <<<"$out"'
check "grouped on CUDA: 1 dispatch (the grouping is inside the kernel)" 'grep -Eq "^grouped gate_up cold m=2 +16 +1 " <<<"$out"'
check "ferrum_subset: every token selects all 8 experts, 6.75 MiB (fused: both stacks)" \
  'grep -Eq "^grouped gate_up l2 m=1 +8 +1 +8 +6\.75 MiB$" <<<"$out" && grep -Eq "^fused_gate_up gate_up l2 m=1 +8 +1 +8 +13\.5 MiB$" <<<"$out"'
out=$("$G" $E --backend vulkan --config ferrum_subset --m 1 --regime l2 --variants grouped --list 2>&1)
check "grouped on Vulkan: 1 dispatch" 'grep -Eq "^grouped gate_up l2 m=1 +8 +1 +8 " <<<"$out"'
out=$("$G" $E --m 3 --regime l2 --variants grouped,per_token --list 2>&1)
check "backend not given: the same counts (grouped 1, per_token m)" \
  'grep -Eq "^grouped gate_up l2 m=3 +24 +1 " <<<"$out" && grep -Eq "^per_token gate_up l2 m=3 +24 +3 " <<<"$out"'
out=$("$G" $E --routing modulo --m 1,16,64 --regime l2 --variants batched --projection both --list 2>&1)
check "qwen3 modulo: 8, 128, 128 unique experts; down cells; no fused for down" \
  'grep -Eq "^batched gate_up l2 m=1 +8 +1 +8 " <<<"$out" && grep -Eq "^batched down l2 m=16 +128 +1 +128 " <<<"$out" \
   && grep -Eq "^batched down l2 m=64 +512 +1 +128 +108 MiB$" <<<"$out"'
out=$("$G" $E --config mixtral_8x7b --m 1 --regime l2 --variants grouped --list 2>&1)
check "mixtral: top-2 of 8 experts, 33 MB each" 'grep -Eq "^grouped gate_up l2 m=1 +2 +1 +2 +63 MiB$" <<<"$out"'

usage() { # name, expected message, args...
  local name=$1 msg=$2; shift 2
  out=$("$@" 2>&1); rc=$?
  check "$name: exit 2 with \"$msg\" (rc=$rc: $(head -c 300 <<<"$out"))" '[[ $rc -eq 2 ]] && grep -qF -- "$msg" <<<"$out"'
}
usage "an m listed twice" "--m=1,2,1 lists m=1 twice" "$G" $E --m 1,2,1 --list
usage "m = 0" "--m=0 has an element 0 that is out of range" "$G" $E --m 0 --list
usage "--zipf-s without zipf" "--zipf-s applies to --routing zipf, not uniform" "$G" $E --zipf-s 1.5 --list
usage "zipf_s = 0" "--zipf-s=0 is not a finite positive number" "$G" $E --routing zipf --zipf-s 0 --list
usage "an unknown config" "--config=llama is not one of qwen3_30b_a3b, mixtral_8x7b, ferrum_subset" "$G" $E --config llama --list
usage "an unknown variant" "--variants=batched,fast has an element fast that is not one of" "$G" $E --variants batched,fast --list
usage "a plot that is not svg or png" "--plot=$tmp/p.pdf must name a .svg or .png file" "$G" $E --plot "$tmp/p.pdf" --list
usage "ITERS=0" "ITERS=0 is out of range: must be at least 1" env ITERS=0 "$G" $E --list
# a row that cannot run says why: mixtral's 252 MiB stacks pass lavapipe's largest buffer
out=$("$G" --backend vulkan $E --config mixtral_8x7b --m 1 --regime l2 --variants per_token --iters 3 --rounds 1 2>&1); rc=$?
if grep -Eq "^per_token +1 .* skipped" <<<"$out"; then
  check "a skipped row's reason is a note (rc=$rc)" \
    '[[ $rc -eq 0 ]] && grep -Eq "^\* skipped \(1 rows\): its 264241168-byte stack is more than the device.s largest buffer \([0-9]+ bytes\)" <<<"$out"'
else
  check "mixtral per_token m=1 runs where its stack fits (rc=$rc)" '[[ $rc -eq 0 ]]'
fi
usage "a grouped geometry that is not NAME=V" '--grouped-geometry=MOE_TC: "MOE_TC" is not NAME=integer' \
  "$G" --backend vulkan $E --config ferrum_subset --m 1 --regime l2 --grouped-geometry MOE_TC
usage "a grouped define the backend lacks" "--grouped-geometry=GTOK=4: moe_vulkan.variant: grouped has no define GTOK" \
  "$G" --backend vulkan $E --config ferrum_subset --m 1 --regime l2 --grouped-geometry GTOK=4
# geometry_case NAME VARIANT FLAG DEFINES STRING...: ferrum_subset m = 1 with another kernel geometry runs (exit 0,
# the variant's row), and its output and JSON lines hold each STRING
geometry_case() {
  local name=$1 variant=$2 flag=$3 defs=$4; shift 4
  out=$("$G" --backend vulkan $E --config ferrum_subset --m 1 --regime l2 --variants "$variant" "$flag" "$defs" \
          --iters 3 --rounds 1 --json "$tmp/geo.jsonl" 2>&1); rc=$?
  local missing=0 want
  for want in "$@"; do grep -qF -- "$want" <<<"$out$(cat "$tmp/geo.jsonl" 2>/dev/null)" || missing=$((missing + 1)); done
  check "$name (rc=$rc, $missing missing)" \
    '[[ $rc -eq 0 && $missing -eq 0 ]] && grep -Eq "^$variant +1 +8 +1 +8 " <<<"$out"'
}
geometry_case "--grouped-geometry runs that kernel, checked, and says so" grouped --grouped-geometry MOE_TC=3 \
  "grouped kernel geometry (--grouped-geometry): MOE_IDOT=1 MOE_NR=4 MOE_T=16 MOE_TC=3 MOE_XB=64" '"MOE_TC":3' \
  '"defines":"MOE_IDOT=1,MOE_NR=4,MOE_T=16,MOE_TC=3,MOE_XB=64"'
geometry_case "the grouped float path runs on request, checked without x's rounding, and says so" grouped \
  --grouped-geometry MOE_IDOT=0 "(|y - y_ref| <= 0.0001 sum|w x|; fused: the SwiGLU bound) and" \
  "grouped kernel geometry (--grouped-geometry): MOE_IDOT=0 MOE_NR=4 MOE_T=16 MOE_TC=4 MOE_XB=64"
geometry_case "the grouped integer path runs, checked with x's rounding in the bound, and says so" grouped \
  --grouped-geometry MOE_IDOT=1 "grouped: plus what x rounded to int16 per 32 values moves"
usage "a pairs define the backend lacks" "--pairs-geometry=GTOK=4: moe_vulkan.variant: pairs has no define GTOK" \
  "$G" --backend vulkan $E --config ferrum_subset --m 1 --regime l2 --pairs-geometry GTOK=4
geometry_case "--fused-geometry runs that kernel (the float path), checked, and says so" fused_gate_up --fused-geometry MOE_IDOT=0,MOE_T=16 \
  "fused_gate_up kernel geometry (--fused-geometry): MOE_IDOT=0 MOE_NR=2 MOE_T=16 MOE_XB=64" '"fused_geometry":{' '"MOE_T":16'
geometry_case "--fused-geometry runs the fused integer path, checked with x's rounding in the bound, and says so" \
  fused_gate_up --fused-geometry MOE_IDOT=1 "fused_gate_up: plus what x rounded to int16 per 32 values moves" \
  "fused_gate_up kernel geometry (--fused-geometry): MOE_IDOT=1 MOE_NR=2 MOE_T=32 MOE_XB=64"
geometry_case "--pairs-geometry runs the batched integer path, checked with x's rounding in the bound, and says so" \
  batched --pairs-geometry MOE_IDOT=1 "per_token and batched: plus what x rounded to int16 per 32 values moves" \
  "per_token and batched kernel geometry (--pairs-geometry): MOE_IDOT=1 MOE_NR=4 MOE_T=32 MOE_XB=64" \
  '"pairs_geometry":{' '"MOE_IDOT":1'

if ! "$G" -e 'require "gpu".open{backend = "vulkan"}' >/dev/null 2>&1; then
  if [[ "${CI:-}" == true ]]; then echo "FAIL: no Vulkan device in CI"; exit 1; fi
  echo "$pass passed, $fail failed (no Vulkan device: device cases skipped)"; ((fail == 0)); exit $?
fi

# The cold regime rotates against L2's size: refused where it is unknown (lavapipe), before the ceiling probe
out=$(GPUBENCH_CACHE_DIR="$tmp/cache" "$G" --backend vulkan $E --config ferrum_subset --m 1 2>&1); rc=$?
check "--regime cold without a known L2 is refused first (rc=$rc)" \
  '[[ $rc -eq 2 ]] && grep -q "regime cold: the L2 size of" <<<"$out" && [[ ! -e "$tmp/cache/ceilings.json" ]]'

plot=()
if command -v gnuplot >/dev/null; then plot=(--plot "$tmp/moe.svg"); fi
out=$("$G" --backend vulkan $E --config ferrum_subset --m 1,2 --regime l2 --method cold --samples 3 --rounds 1 \
        --json "$tmp/m.jsonl" --csv "$tmp/m.csv" "${plot[@]}" 2>"$tmp/err"); rc=$?
check "ferrum_subset m = 1, 2 on lavapipe exits 0 (rc=$rc: $(tail -c 600 "$tmp/err"))" '[[ $rc -eq 0 ]]'
check "the header has the documented columns" \
  'grep -Eq "^variant +m +pairs +disp +uniq +us/step +us/pair +scale/m1 +unique B +GB/s +% read +floor us +x floor +x peer +regime" <<<"$out"'
for v in per_token batched grouped fused_gate_up; do
  check "$v at m = 1 and 2, timed" '[[ $(grep -Ec "^$v +[12] +(8|16) +[12] +8 +[0-9.]+ +[0-9.]+ " <<<"$out") -eq 2 ]]'
done
check "per_token dispatches m, the others 1 (Vulkan grouped: 1)" \
  'grep -Eq "^per_token +2 +16 +2 " <<<"$out" && grep -Eq "^batched +2 +16 +1 " <<<"$out" && grep -Eq "^grouped +2 +16 +1 " <<<"$out"'
check "scale/m1 is 1 at m = 1" '[[ $(grep -Ec "^[a-z_]+ +1 +8 +1 +8 +[0-9.]+ +[0-9.]+ +1\.000 " <<<"$out") -eq 4 ]]'
check "the footer says every variant matched the reference and batched matched per_token" \
  'grep -q "every variant matched the FP64 reference" <<<"$out" && grep -q "batched matched per_token bit for bit" <<<"$out"'
check "JSON: 8 cells, every one checked below 1e-4, batched bit-exact" \
  '"$G" -e "local r = require \"gpubench.report\".read_jsonl(\"$tmp/m.jsonl\"); local n, b = 0, 0
           for _, c in ipairs(r) do if c.type == \"cell\" then
             assert(c.status == \"ok\" and c.max_rel_err < 1e-4 and c.us_step > 0, c.label); n = n + 1
             if c.variant == \"batched\" then assert(c.bit_exact == true); b = b + 1 end end end
           assert(n == 8 and b == 2)"'
check "CSV: header + 8 rows" '[[ $(grep -vc "^#" "$tmp/m.csv") -eq 9 ]]'
want_idot=0
if "$G" -e 'local d = require "gpu".open{backend = "vulkan"}; os.exit(d.integer_dot_product and d.subgroup_size >= 8)'; then
  want_idot=1
fi
check "the footer names the defines each kernel ran per step (the device's pick: MOE_IDOT=$want_idot)" \
  'grep -qF "* per_token and batched kernel per step (the vulkan table and its rules, docs/kernels/moe.md): m=1,2: MOE_IDOT=$want_idot MOE_NR=4 MOE_T=32 MOE_XB=64" <<<"$out" &&
   grep -qF "* grouped kernel per step (the vulkan table and its rules, docs/kernels/moe.md): m=2: MOE_IDOT=$want_idot MOE_NR=4 MOE_T=16 MOE_TC=4 MOE_XB=64" <<<"$out" &&
   grep -qF "* fused_gate_up kernel per step (the vulkan table and its rules, docs/kernels/moe.md): m=1,2: MOE_IDOT=$want_idot MOE_NR=2 MOE_T=32 MOE_XB=64" <<<"$out"'
check "grouped at m = 1 runs batched's step, and the footer says so" \
  'grep -qF "* grouped at m = 1 runs batched'"'"'s step (the pairs kernel): one token'"'"'s top_k experts are distinct" <<<"$out"'
check "JSON: each cell names its kernel defines, per_token and batched the same (and grouped at m = 1)" \
  '"$G" -e "local d = {}
           for _, c in ipairs(require(\"gpubench.report\").read_jsonl(\"$tmp/m.jsonl\")) do if c.type == \"cell\" then
             assert(type(c.defines) == \"string\" and c.defines:match(\"MOE_T=%d+\"), c.label); d[(\"%s%d\"):format(c.variant, c.m)] = c.defines end end
           assert(d.batched1 == d.per_token1 and d.batched2 == d.per_token2 and d.grouped1 == d.batched1
                  and d.grouped2:match(\"MOE_TC=4\"))"'
# --point-ms: a step of several ms on lavapipe is timed at n = 1, not --iters 50, and the footnote says so
out=$("$G" --backend vulkan $E --config ferrum_subset --m 1 --regime l2 --variants batched --point-ms 1 --iters 50 \
        --rounds 1 --json "$tmp/p.jsonl" 2>&1); rc=$?
check "--point-ms lowers n for a slow step and says so (rc=$rc)" \
  '[[ $rc -eq 0 ]] && grep -q "with n = 50, fewer where n calls would take over 1 ms" <<<"$out" &&
   "$G" -e "for _, c in ipairs(require(\"gpubench.report\").read_jsonl(\"$tmp/p.jsonl\")) do
              if c.type == \"cell\" then assert(c.iters >= 1 and c.iters < 50 and c.us_step > 0, c.iters) end end"'
if ((${#plot[@]})); then
  check "the plot of us per step against m" '[[ -s "$tmp/moe.svg" ]] && grep -q "grouped l2" "$tmp/moe.svg" && grep -q "fused_gate_up l2" "$tmp/moe.svg"'
fi
summary
