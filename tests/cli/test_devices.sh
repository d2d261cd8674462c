#!/usr/bin/env bash
# --devices and the device-spread report. On lavapipe's one device,
# --devices 0,0 runs two workers on it at once (the check the issue asks of
# one H200): the merged --json holds both workers' rows of every cell with
# the device columns and the console prints the merged table; split deals
# the cells between the workers; --shard combines with both; a failing worker
# fails the run with its number and exit status; refusals come before any
# worker. tools/device_spread.lua flags a device planted 25 % slow in a
# synthetic file and passes a clean one.
set -u
G=$1
. "$(dirname "$0")/lib.sh"
export TMPDIR=$tmp # the workers' folder of a failed run stays there
usage() { # usage NAME MESSAGE ARGS...: exit 2 with the message, no worker started
  local name=$1 msg=$2; shift 2
  out=$("$G" "$@" 2>&1); rc=$?
  check "$name: exit 2 ($out)" '[[ $rc -eq 2 && $out == "gpubench: $msg" ]]'
}

# ---------------------------------------------------------------- the spread report (no device)
cat >"$tmp/synth.lua" <<'EOF'
-- a --devices-like file: 4 workers x 6 cells, cell c takes c ms, worker 2 x1.25, worker 3 throttled once
local report, shard = require "gpubench.report", require "gpubench.shard"
local slow = tonumber(arg[2])
local sink = report.open { columns = { { key = "kernel" }, { key = "ms", unit = "ms" } }, json = arg[1], console = false,
  env = { backend = "vulkan", command_line = { "experiments/bandwidth.lua" }, options = {}, shard = shard.record(nil, 6) } }
for c = 1, 6 do
  for w = 0, 3 do
    sink:add { kernel = "k" .. c, label = "cell " .. c, cell_index = c, worker = w, device = w, device_name = "gpu" .. w,
               device_uuid = "u" .. w, ms = c * (w == 2 and slow or 1),
               status = (arg[3] and w == 3 and c == 4) and "throttled" or "ok" }
  end
end
sink:close()
EOF
"$G" "$tmp/synth.lua" "$tmp/outlier.jsonl" 1.25
out=$("$G" tools/device_spread.lua "$tmp/outlier.jsonl" 2>&1); rc=$?
check "a planted slow device: exit 1, flagged (rc=$rc)" \
  '[[ $rc -eq 1 ]] && grep -qxF "OUTLIER: worker 2 device 2 (gpu2): slow (median ratio 1.250)" <<<"$out" && [[ $(grep -c "^OUTLIER" <<<"$out") -eq 1 ]]'
check "the per-cell spread is the planted 1.25 on every cell" \
  '[[ $(grep -Ec "^cell [1-6] +4 .* 1\.250  worker 2 device 2 \(gpu2\)$" <<<"$out") -eq 6 ]]'
check "the other devices are ok" '[[ $(grep -Ec "^worker [013] device [013] \(gpu[013]\) +6 +1\.000 +1\.000 +0  ok$" <<<"$out") -eq 3 ]]'
"$G" "$tmp/synth.lua" "$tmp/clean.jsonl" 1.02
out=$("$G" tools/device_spread.lua "$tmp/clean.jsonl" --json "$tmp/spread.jsonl" 2>&1); rc=$?
check "2 % off under the 5 % threshold: exit 0, nothing flagged (rc=$rc)" '[[ $rc -eq 0 ]] && ! grep -q OUTLIER <<<"$out"'
check "--json writes the spread records" \
  '[[ $(grep -c "\"type\":\"spread_cell\"" "$tmp/spread.jsonl") -eq 6 && $(grep -c "\"type\":\"spread_device\"" "$tmp/spread.jsonl") -eq 4 ]]'
out=$("$G" tools/device_spread.lua "$tmp/clean.jsonl" --threshold 1 2>&1); rc=$?
check "the same file at --threshold 1: worker 2 flagged (rc=$rc)" '[[ $rc -eq 1 ]] && grep -q "^OUTLIER: worker 2 device 2 (gpu2): slow" <<<"$out"'
"$G" "$tmp/synth.lua" "$tmp/throttled.jsonl" 1.0 throttle
out=$("$G" tools/device_spread.lua "$tmp/throttled.jsonl" 2>&1); rc=$?
check "a throttled row flags its device (rc=$rc)" '[[ $rc -eq 1 ]] && grep -qxF "OUTLIER: worker 3 device 3 (gpu3): throttled (median ratio 1.000)" <<<"$out"'

if ! "$G" -e 'require "gpu".open{backend = "vulkan"}' >/dev/null 2>&1; then
  if [[ "${CI:-}" == true ]]; then echo "FAIL: no Vulkan device in CI"; exit 1; fi
  echo "$pass passed, $fail failed (no Vulkan device: device cases skipped)"; ((fail == 0)); exit $?
fi

# ---------------------------------------------------------------- --devices 0,0 on one device
small=(--backend vulkan experiments/bandwidth.lua --sizes 64K,128K,256K --iters 8 --rounds 1)
cat >"$tmp/rows.lua" <<'EOF'
-- "cell_index worker device" per cell row, sorted; then the environment's devices
local r = require("gpubench.report").read_jsonl(arg[1])
local lines = {}
for _, x in ipairs(r) do
  if x.type == "cell" then
    assert(type(x.device_name) == "string" and x.device_name ~= "" and type(x.device_uuid) == "string", "device columns")
    lines[#lines + 1] = ("%d %d %d"):format(x.cell_index, x.worker, x.device)
  end
end
table.sort(lines)
for _, l in ipairs(lines) do print(l) end
print(("devices %d, shard %d/%d, %s"):format(#r[1].devices, r[1].shard.index, r[1].shard.count, r[#r].type))
EOF
out=$("$G" "${small[@]}" --devices 0,0 --json "$tmp/d.jsonl" 2>"$tmp/err"); rc=$?
check "--devices 0,0 runs (rc=$rc: $(head -c 400 "$tmp/err"))" '[[ $rc -eq 0 ]]'
# a failed worker's log, shown before $tmp goes (it failed once in CI, 2026-12-07, and passed on rerun)
if [[ $rc -ne 0 ]]; then
  for f in "$tmp"/gpubench-devices-*/worker-*.log; do [[ -f $f ]] && { echo "== $f"; tail -n 40 "$f"; } >&2; done
fi
check "the merged file: each of the 6 cells from worker 0 and worker 1, on device 0" \
  '[[ $("$G" "$tmp/rows.lua" "$tmp/d.jsonl" | paste -sd,) == "1 0 0,1 1 0,2 0 0,2 1 0,3 0 0,3 1 0,4 0 0,4 1 0,5 0 0,5 1 0,6 0 0,6 1 0,devices 2, shard 0/1, end" ]]'
check "the console prints the merged table with worker and device" \
  '[[ $(grep -Ec "^ +[01] +0  (copy|read) " <<<"$out") -eq 12 ]] && grep -q "2 workers (devices 0,0, same)" <<<"$out"'
check "stderr names the workers and their folder" 'grep -q "devices: 2 workers on vulkan devices 0,0 (same), logs in" "$tmp/err"'
check "the workers' folder is removed after a run that succeeded" '[[ -z $(ls "$tmp" | grep gpubench-devices) ]]'
out=$("$G" tools/device_spread.lua "$tmp/d.jsonl" 2>&1); rc=$?
# (lavapipe's timings are what they are: the verdict is not checked, a cell may be "noise")
check "the spread report reads it: 2 devices (rc=$rc)" '[[ $rc -le 1 ]] && grep -q "^ms per cell across 2 devices (" <<<"$out"'

"$G" "${small[@]}" --devices 0,0 --devices-mode split --shard 1/2 --json "$tmp/split.jsonl" >/dev/null 2>"$tmp/err"; rc=$?
check "split + --shard 1/2: shard 1/2's cells 2, 4, 6 dealt to workers 0, 1, 0 (rc=$rc: $(head -c 300 "$tmp/err"))" \
  '[[ $("$G" "$tmp/rows.lua" "$tmp/split.jsonl" | paste -sd,) == "2 0 0,4 1 0,6 0 0,devices 2, shard 1/2, end" ]]'
"$G" "${small[@]}" --devices 0,0 --shard 0/2 --json "$tmp/same0.jsonl" >/dev/null 2>&1
"$G" tools/merge_results.lua "$tmp/same0.jsonl" "$tmp/split.jsonl" -o "$tmp/m.jsonl" >/dev/null 2>"$tmp/err"; rc=$?
check "--devices files of the two shards merge (rc=$rc: $(cat "$tmp/err"))" \
  '[[ $rc -eq 0 ]] && [[ $("$G" "$tmp/rows.lua" "$tmp/m.jsonl" 2>/dev/null | head -9 | paste -sd,) == "1 0 0,1 1 0,2 0 0,3 0 0,3 1 0,4 1 0,5 0 0,5 1 0,6 0 0" ]]'

"$G" "${small[@]}" --devices all --json "$tmp/all.jsonl" >/dev/null 2>&1; rc=$?
check "--devices all on lavapipe: one worker on device 0 (rc=$rc)" \
  '[[ $("$G" "$tmp/rows.lua" "$tmp/all.jsonl" | paste -sd,) == "1 0 0,2 0 0,3 0 0,4 0 0,5 0 0,6 0 0,devices 1, shard 0/1, end" ]]'
# the experiments that do not run through cells.table's special(): linear_suite and swiglu_ab
"$G" --backend vulkan experiments/linear_suite.lua --qtype q4 --n 64 --k 128 --sweep 1:3:1 --samples 3 --warmup 1 \
  --devices 0,0 --devices-mode split --json "$tmp/linear.jsonl" >/dev/null 2>"$tmp/err"; rc=$?
check "linear_suite --devices 0,0 split: T=1..3 dealt to workers 0, 1, 0 (rc=$rc: $(head -c 300 "$tmp/err"))" \
  '[[ $("$G" "$tmp/rows.lua" "$tmp/linear.jsonl" | paste -sd,) == "1 0 0,2 1 0,3 0 0,devices 2, shard 0/1, end" ]]'
"$G" --backend vulkan experiments/swiglu_ab.lua --shape 64,256 --m-values 1,3 --l2-bytes 128K --warmup 2 --iterations 4 \
  --trials 2 --rounds 1 --read-gbs 50 --regime l2 --mode graph --devices 0,0 --json "$tmp/swiglu.jsonl" >/dev/null 2>"$tmp/err"; rc=$?
# (a path's p50 is absent where lavapipe's few calls left it "noise": its samples are there either way)
check "swiglu_ab --devices 0,0: both groups from both workers, each with its paths' samples (rc=$rc: $(head -c 300 "$tmp/err"))" \
  '[[ $("$G" "$tmp/rows.lua" "$tmp/swiglu.jsonl" | paste -sd,) == "1 0 0,1 1 0,2 0 0,2 1 0,devices 2, shard 0/1, end" ]] && [[ $(grep -c "\"paths\":{" "$tmp/swiglu.jsonl") -eq 4 ]]'
usage "swiglu_ab's --output with --devices" "--output writes one file per run: with --devices, write --json and make it from the merged file" \
  --backend vulkan experiments/swiglu_ab.lua --shape 64,256 --regime l2 --devices 0,0 --output "$tmp/s.json"

# A worker that fails: gemv_variants refuses the define in both workers (status 2).
out=$(M=64 K=256 "$G" --backend vulkan experiments/gemv_variants.lua --kernels q4_0 --grid BOGUS=1 --devices 0,0 \
      --json "$tmp/bad.jsonl" 2>&1); rc=$?
check "a failing worker fails the run with its status (rc=$rc)" '[[ $rc -eq 2 ]] && [[ ! -e $tmp/bad.jsonl ]]'
check "... naming the worker, its device, its status and its last line" \
  'grep -q "^gpubench: devices: worker 0 (vulkan device 0) failed with exit status 2: --grid: the vulkan q4_0 kernel has no define BOGUS (log: " <<<"$out" && grep -q "^devices: worker 1 (vulkan device 0) failed with exit status 2" <<<"$out"'
check "... and keeps the workers' logs" '[[ -n $(ls "$tmp"/gpubench-devices-*/worker-0.log 2>/dev/null) ]]'

usage "a device that does not exist" "--devices=0,3: vulkan has 1 device (0), no device 3" "${small[@]}" --devices 0,3
usage "--device with --devices" "--device and --devices: give one of them" "${small[@]}" --devices 0 --device 0
usage "--list-cells with --devices" "--list-cells and --devices: --list-cells runs in one process (drop --devices)" \
  "${small[@]}" --devices 0 --list-cells
usage "--devices-mode alone" "--devices-mode applies with --devices" "${small[@]}" --devices-mode split
usage "a per-run output file" "--plot writes one file per run: with --devices, write --json and make it from the merged file" \
  --backend vulkan experiments/moe_scaling.lua --devices 0 --plot "$tmp/p.svg"

summary
