#!/usr/bin/env bash
# One call on a GPU server that has no Lua or Vulkan packages: the build folder
# (built on Debian 12, Lua & co. linked statically) travels with the tree, the
# Vulkan loader travels as .deb files in .gl/ (see the device notes), and every
# log goes to $LOGS, packed at the end into $OUT/gpu-logs.tgz (the device tool
# brings back at most 8 files).
#
#   scripts/gpu-session.sh check          # device list, backend tests, Lua tests, GEMV correctness
#   scripts/gpu-session.sh quick          # CUDA bandwidth and the 14336x5120 rotated GEMV table
#   scripts/gpu-session.sh bandwidth      # bandwidth --validate on both backends
#   scripts/gpu-session.sh tables [cuda|vulkan]   # the GEMV tables for docs/results
#   scripts/gpu-session.sh all
set -uo pipefail
phase=${1:-all}
backends=${2:-cuda vulkan}
OUT=${OUT:-$PWD/gpu-out}
LOGS=${LOGS:-/tmp/gpu-logs}
mkdir -p "$OUT" "$LOGS"
trap 'tar czf "$OUT/gpu-logs.tgz" -C "$LOGS" .' EXIT
if [[ -d .gl ]] && ! ldconfig -p | grep -q libvulkan.so.1; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
fi
if [[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json && -z "${VK_DRIVER_FILES:-}" ]]; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi
export GPUBENCH_CACHE_DIR=${GPUBENCH_CACHE_DIR:-/tmp/gpubench-cache}
BIN=${BIN:-build}
G=$BIN/gpubench
git_rev=$($G -e 'print(require "gpu".git)' 2>/dev/null)
echo "gpubench $git_rev, $(date -u +%Y-%m-%dT%H:%MZ)" > "$LOGS/revision.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv \
  > "$LOGS/nvidia-smi.txt" 2>&1
status=0
run() { # run NAME CMD... : logs to $LOGS/NAME.log, prints a one-line verdict
  local name=$1; shift
  local t0=$SECONDS
  "$@" > "$LOGS/$name.log" 2>&1
  local rc=$?
  printf '%-28s rc=%d %4ds  %s\n' "$name" "$rc" $((SECONDS - t0)) "$(grep -E 'passed|checks|skipped' "$LOGS/$name.log" | tail -1)"
  ((rc == 0)) || status=1
  return $rc
}

if [[ $phase == check || $phase == all ]]; then
  $G --list-devices | tee "$LOGS/devices.txt"
  run c_cuda_backend $BIN/test_cuda_backend
  run c_vulkan_backend $BIN/test_vulkan_backend
  run c_vulkan_batch $BIN/test_vulkan_batch
  run c_nvrtc $BIN/test_nvrtc_compile
  for t in tests/lua/test_*.lua; do
    n=$(basename "$t" .lua)
    run "lua_$n" $G "$t"
  done
  run lua_test_gemv_vulkan_nv $G --backend vulkan tests/lua/test_gemv_vulkan.lua
fi

if [[ $phase == quick ]]; then
  run bandwidth_cuda $G --backend cuda experiments/bandwidth.lua --sizes 1G,4G
  run gemv_cuda_14336x5120_rot env M=14336 K=5120 $G --backend cuda experiments/gemv_table.lua --rotate
  cat "$LOGS/bandwidth_cuda.log" "$LOGS/gemv_cuda_14336x5120_rot.log"
fi

if [[ $phase == bandwidth || $phase == all ]]; then
  for b in cuda vulkan; do
    run "bandwidth_$b" $G --backend $b experiments/bandwidth.lua --sizes 256M,1G,2G --validate \
      --refresh-ceiling --json "$LOGS/bandwidth_$b.jsonl"
    cat "$LOGS/bandwidth_$b.log"
  done
fi

if [[ $phase == tables || $phase == all ]]; then
  for b in $backends; do
    for o in forward reverse; do
      run "gemv_${b}_$o" $G --backend $b experiments/gemv_table.lua --order $o \
        --markdown "$LOGS/gemv_${b}_$o.md" --json "$LOGS/gemv_${b}_$o.jsonl"
      run "gemv_${b}_rot_$o" $G --backend $b experiments/gemv_table.lua --rotate --order $o \
        --markdown "$LOGS/gemv_${b}_rot_$o.md" --json "$LOGS/gemv_${b}_rot_$o.jsonl"
    done
    run "gemv_${b}_14336x5120_rot" env M=14336 K=5120 $G --backend $b experiments/gemv_table.lua \
      --rotate --validate --markdown "$LOGS/gemv_${b}_14336x5120_rot.md" \
      --json "$LOGS/gemv_${b}_14336x5120_rot.jsonl"
  done
fi
exit $status
