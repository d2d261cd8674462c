#!/usr/bin/env bash
# tools/kernel_stats.lua on lavapipe: no items is usage (exit 2); every item kind resolves to
# the kernel the tables pick and compiles, and lavapipe's missing statistics are said per
# kernel; an item that names nothing and a kernel file that does not exist are reported by
# name while the other items still run, and the exit status is 1.
set -u
G=$1
. "$(dirname "$0")/lib.sh"
KS="$G tools/kernel_stats.lua --backend vulkan"

out=$($KS 2>&1); rc=$?
check "no items: usage, exit 2 ($rc: $out)" '[[ $rc -eq 2 ]] && grep -q "^usage: gpubench tools/kernel_stats.lua" <<<"$out"'

out=$($KS linear:w8:5120:17408:1 gemv:q4_k:256:512:4 swiglu:64:256:2 moe:grouped:qwen3_30b_a3b:gate_up:8 \
  file:kernels/vulkan/copy.comp:main:256 2>&1); rc=$?
check "every item kind resolves and compiles (rc=$rc: $out)" '[[ $rc -eq 0 ]]'
check "linear: the thin-grid rule's pick (64 lanes, 2 rows)" \
  'grep -qE "^linear:w8:5120:17408:1 route dot: kernels/vulkan/linear_gemv.comp .*LIN_LANES=64 LIN_NR=2 .*block 256x1x1$" <<<"$out"'
check "gemv at T = 4: the integer kernel, x quantized once per call" \
  'grep -qE "^gemv:q4_k:256:512:4: kernels/vulkan/gemv_q4_k.comp GEMV_IDOT=1 .*GEMV_TOKENS=4 GEMV_XB=8 GEMV_XPRE=1," <<<"$out"'
check "gemv at T = 4: and its first dispatch, the quantizer" \
  'grep -qE "^gemv:q4_k:256:512:4 prep: kernels/vulkan/gemv_idot_xprep.comp GEMV_TOKENS=4, block 256x1x1$" <<<"$out"'
check "swiglu: the fused and the chain kernel" \
  '[[ $(grep -cE "^swiglu:64:256:2 (fused|gemv): " <<<"$out") -eq 2 ]]'
check "moe: the grouped shader at m = 8" 'grep -qE "^moe:grouped:qwen3_30b_a3b:gate_up:8: kernels/vulkan/moe_q4k_grouped.comp" <<<"$out"'
check "lavapipe's missing statistics said for each of the 7 kernels" \
  '[[ $(grep -c "does not offer VK_KHR_pipeline_executable_properties" <<<"$out") -eq 7 ]]'

out=$($KS bogus:1 file:kernels/vulkan/nope.comp:main:64 file:kernels/vulkan/copy.comp:main:256 2>&1); rc=$?
check "bad items: exit 1, each named, the good one still run (rc=$rc: $out)" \
  '[[ $rc -eq 1 ]] && grep -q "^bogus:1: kernel_stats: \"bogus:1\" is not linear:Q:N:K:T" <<<"$out" \
   && grep -q "^file:kernels/vulkan/nope.comp:main:64: cannot open .*nope.comp" <<<"$out" \
   && grep -q "^file:kernels/vulkan/copy.comp:main:256: kernels/vulkan/copy.comp" <<<"$out" \
   && grep -q "kernel_stats: 2 of the items failed" <<<"$out"'
summary
