#!/usr/bin/env bash
# experiments/swiglu_ab.lua end to end on the Vulkan device CI has (lavapipe):
# a small --shape in both modes and both regimes, M = 1 and 3. The JSON must
# hold every group with chain and fused correct against the FP64 reference,
# vendor n/a with its reason, the launches per call, every sample and
# p50/p90/p99, trials in A-B-C-C-B-A order and the environment; the Markdown
# one table per mode and regime with the seed's columns, L2-resident rows
# labelled so and never on a DRAM ceiling. Bad options stop the run before any
# device work, exit 2.
set -u
G=$1
. "$(dirname "$0")/lib.sh"
E=experiments/swiglu_ab.lua

usage() { # name, expected message, args...
  local name=$1 msg=$2; shift 2
  out=$("$G" $E "$@" 2>&1); rc=$?
  check "$name: exit 2 with \"$msg\" (rc=$rc: $(head -c 300 <<<"$out"))" '[[ $rc -eq 2 ]] && grep -qF -- "$msg" <<<"$out"'
}
usage "one number for --shape" "--shape=64 must be two integers N,K" --shape 64
usage "K not a multiple of 8" "--shape=64,100: K=100 must be a multiple of 8" --shape 64,100
usage "M above 8" "--m-values=1,9 has an element 9 that is out of range: must be at most 8" --m-values 1,9
usage "M twice" "--m-values=2,2 names M=2 twice" --m-values 2,2
usage "zero iterations" "--iterations=0 is out of range: must be at least 1" --iterations 0
usage "a bad geometry" "--geometry=TILES: \"TILES\" is not NAME=integer" --geometry TILES
usage "an unknown mode" "--mode=fast is not one of eager, graph, both" --mode fast

if ! "$G" -e 'require "gpu".open{backend = "vulkan"}' >/dev/null 2>&1; then
  if [[ "${CI:-}" == true ]]; then echo "FAIL: no Vulkan device in CI"; exit 1; fi
  echo "$pass passed, $fail failed (no Vulkan device: device cases skipped)"; ((fail == 0)); exit $?
fi
V="--backend vulkan --shape 64,256"
mkdir -p "$tmp/cache"
vusage() { # as usage, on the device, and before the read-ceiling probe
  local name=$1 msg=$2; shift 2
  out=$(GPUBENCH_CACHE_DIR="$tmp/cache" "$G" $E $V "$@" 2>&1); rc=$?
  check "$name: exit 2 with \"$msg\", no probe (rc=$rc: $(head -c 300 <<<"$out"))" \
    '[[ $rc -eq 2 ]] && grep -qF -- "$msg" <<<"$out" && ! grep -q "measuring the read ceiling" <<<"$out" && [[ ! -e "$tmp/cache/ceilings.json" ]]'
}
vusage "rotated without a known L2" "the L2 size of llvmpipe" --regime rotated
vusage "a CUDA define on Vulkan" "the Vulkan SwiGLU kernels have no define TILES (they take SW_WG, SW_OUT, SW_COOP, SW_WR, SW_KS, SW_U, SW_WB)" --regime l2 --geometry TILES=2
vusage "SW_COOP=1 on a device without the matrices" "SW_COOP=1 needs VK_NV_cooperative_matrix, which llvmpipe" --regime l2 --geometry SW_COOP=1
vusage "a scalar define with SW_COOP" "SW_WG is the scalar kernels' (SW_COOP=1)" --regime l2 --geometry SW_COOP=1,SW_WG=128
V="--backend vulkan --shape 8,72" vusage "SW_WB=1 with K not of 64" "custom (N=8, K=72): K=72 must be a multiple of 64 for SW_COOP=2,SW_KS=2,SW_U=2,SW_WB=1,SW_WR=4 (the kernels read units of 64 k)" --regime l2 --geometry SW_COOP=2,SW_WB=1
vusage "SW_OUT other than 2 or 4" "SW_OUT=3 is not 2 or 4 (outputs per workgroup, in pairs of a bf16 word)" --regime l2 --geometry SW_OUT=3
out=$(GPUBENCH_CACHE_DIR="$tmp/cache" "$G" $E --backend vulkan --shape 8,8 --l2-bytes 1M 2>&1); rc=$?
check "a rotation of more copies than a batch cycles through is refused (rc=$rc: $out)" \
  '[[ $rc -eq 2 ]] && grep -qF "takes 16384 copies, more than the 4096 launches" <<<"$out"'
vusage "a workgroup that is no power of two" "SW_WG=48 is not a power of two from 32 to 1024" --regime l2 --geometry SW_WG=48

out=$("$G" $E $V --m-values 1,3 --l2-bytes 128K --warmup 2 --iterations 4 --trials 2 --rounds 1 --read-gbs 50 \
        --output "$tmp/s.json" --markdown-output "$tmp/s.md" 2>"$tmp/err"); rc=$?
check "the run exits 0 (rc=$rc: $(head -c 400 "$tmp/err"))" '[[ $rc -eq 0 ]]'
check "console: 8 rows, vendor n/a" '[[ $(grep -Ec "^custom +(l2|rotated) +(eager|graph) +[13] +n/a " <<<"$out") -eq 8 ]]'

cat >"$tmp/check.lua" <<'EOF'
local doc = require("cjson").decode(io.open(arg[1]):read("a"))
local trials = require "gpubench.trials"
local function assert_eq(a, b, what) if a ~= b then error(("%s: %s, expected %s"):format(what, tostring(a), tostring(b)), 2) end end
assert_eq(doc.type, "swiglu_ab", "type"); assert_eq(doc.interrupted, false, "interrupted")
assert_eq(doc.environment.device.backend, "vulkan", "backend")
assert(doc.environment.command_line and doc.environment.date and doc.environment.gpubench_version, "environment")
local s = doc.settings
assert_eq(s.warmup, 2, "warmup"); assert_eq(s.iterations, 4, "iterations"); assert_eq(s.trials, 2, "trials")
assert_eq(s.l2_bytes, 131072, "l2_bytes"); assert_eq(s.l2_source, "--l2-bytes", "l2_source")
assert_eq(doc.paths.fused.launches_per_call, 1, "fused launches"); assert_eq(doc.paths.chain.launches_per_call, 2, "chain")
assert_eq(doc.paths.vendor.launches_per_call, 2, "vendor launches")
assert_eq(#doc.groups, 8, "groups")
local seen = {}
for _, g in ipairs(doc.groups) do
  local what = g.label
  seen[g.regime .. g.mode .. math.tointeger(g.m)] = true
  assert_eq(g.n, 64, what); assert_eq(g.k, 256, what); assert_eq(g.weight_bytes, 65536, what)
  assert_eq(g.paths.vendor.status, "n/a", what)
  assert_eq(g.paths.vendor.why, "n/a on vulkan (cuBLASLt is a CUDA library)", what)
  for _, p in ipairs { "chain", "fused" } do
    local x = g.paths[p]
    assert(x.error.ok and x.error.failures == 0 and x.error.outputs == 64 * g.m, what .. " " .. p .. " correct")
    assert(x.error.cosine > 0.9999 and x.error.max_abs >= 0 and x.error.mean_abs <= x.error.max_abs, what .. " figures")
    assert_eq(x.launches_per_call, p == "fused" and 1 or 2, what .. " launches")
    assert_eq(#x.timings, 4, what .. " " .. p .. " samples (2 trials x 2)")
    assert_eq(#(x.samples or {}) + x.noise, 4, what .. " samples + noise")
    for _, t in ipairs(x.timings) do assert(t.t_n > 0 and t.t_2n > 0 and t.n == math.max(4, g.copies), what .. " timing") end
    if x.samples then
      local q = x.summary
      assert(q.p50 and q.p90 and q.p99 and q.p50 <= q.p90 and q.p90 <= q.p99 and q.n == #x.samples, what .. " quantiles")
    end
  end
  local names = {}
  for i, e in ipairs(g.order) do names[i] = e.path end
  assert(trials.check(names, { "chain", "fused" }, 2), what .. " A-B-C-C-B-A")
  assert(select(2, trials.check(names, { "fused", "chain" }, 2)), what .. " (the check can fail)")
  if g.regime == "rotated" then
    assert(g.copies >= 2 and g.copies * g.weight_bytes >= 4 * g.l2_bytes and g.fits == "DRAM x" .. math.tointeger(g.copies), what .. " rotation")
  else
    assert_eq(g.copies, 1, what); assert_eq(g.fits, "L2", what)
    assert(g.paths.fused.pct_read == nil, what .. ": an L2-resident row has no % of the DRAM ceiling")
  end
end
for _, k in ipairs { "l2eager1", "l2graph3", "rotatedeager3", "rotatedgraph1" } do assert(seen[k], k) end
print("json ok")
EOF
check "JSON: every group, figures, samples, order, environment ($("$G" "$tmp/check.lua" "$tmp/s.json" 2>&1 | tail -1))" \
  '[[ $("$G" "$tmp/check.lua" "$tmp/s.json" 2>&1) == "json ok" ]]'

md=$(cat "$tmp/s.md" 2>/dev/null)
check "Markdown: four tables, one per mode and regime" \
  '[[ $(grep -c "^### custom (N = 64, K = 256) · \(eager\|graph\) · " <<<"$md") -eq 4 ]]'
check "Markdown: the seed's columns" \
  '[[ $(grep -c "^| M | vendor (µs) | chain (µs) | fused (µs) | vs best unfused | fused GB/s |" <<<"$md") -eq 4 ]]'
check "Markdown: 8 rows, vendor n/a, chain and fused timed or noise" \
  '[[ $(grep -Ec "^\| [13] \| n/a \| ([0-9.]+|noise) \| ([0-9.]+|noise) \| " <<<"$md") -eq 8 ]]'
check "Markdown: the launches per call under each table" '[[ $(grep -c "^launches per call: vendor 2, chain 2, fused 1$" <<<"$md") -eq 4 ]]'
check "Markdown: L2-resident tables and rows say so" \
  '[[ $(grep -c "· l2 (L2-resident)$" <<<"$md") -eq 2 && $(grep -c "| L2-resident: one 64 KiB copy in a 128 KiB L2 |$" <<<"$md") -eq 4 ]]'
check "Markdown: an L2 row's GB/s is marked not DRAM and has no % of the read ceiling" \
  '! grep "L2-resident: one" <<<"$md" | grep -v "(L2, not DRAM) | n/a (L2) |" | grep -Eq "\| [0-9.]+ \| [0-9.]+ \|" && ! grep "DRAM: 8 rotated" <<<"$md" | grep -q "not DRAM"'
check "Markdown: rotated rows name their copies" '[[ $(grep -c "| DRAM: 8 rotated copies of 64 KiB, 512 KiB >= 4x L2 |$" <<<"$md") -eq 4 ]]'
check "Markdown: the notes name the trials, the bytes and the vendor's absence" \
  'grep -q "^\* µs: the p50 of 4 samples per path (2 trials in A-B-C-C-B-A order)" <<<"$md" &&
   grep -q "^\* fused GB/s = (weights + x + y bytes)" <<<"$md" && grep -q "^\* vendor: n/a on vulkan" <<<"$md"'
summary
