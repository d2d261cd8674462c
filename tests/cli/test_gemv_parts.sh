#!/usr/bin/env bash
# tools/gemv_parts.lua on lavapipe: a two-launch GEMV (f16 on the emulated cooperative
# matrices, COOP_REG=2) timed whole, its first dispatch alone, its GEMV alone and a
# diagnostic build, each a positive time; a one-launch variant, a malformed CHANGES or DIAG
# and a bad M refused by name, before any timing.
set -u
G=$1
. "$(dirname "$0")/lib.sh"
run() { out=$(env "$@" "$G" --backend vulkan tools/gemv_parts.lua 2>&1); rc=$?; }
us() { grep -E "^$1 +[0-9]+\.[0-9]+ us " <<<"$out" | awk '{ for (i = 1; i <= NF; i++) if ($(i + 1) == "us") { print $i; exit } }'; }

run M=48 K=64 ITERS=30 CHANGES="GEMV_TOKENS=2,GEMV_COOP=2,COOP_REG=2,COOP_U=1" DIAG="WIDE_DIAG=2"
check "a two-launch call: exit 0 ($out)" '[[ $rc -eq 0 ]]'
check "the header names the shape, the defines and the single copy" \
  'grep -qE "^f16 48x64 on .*, gemv_dense_wide\.comp .*COOP_U=1.*one weight copy \(the L2 size is unknown\), 30 calls a point$" <<<"$out"'
for part in "whole call" "first dispatch" "GEMV alone" "GEMV WIDE_DIAG=2"; do
  v=$(us "$part")
  check "$part: a positive time ($v)" '[[ -n $v ]] && awk -v v="$v" "BEGIN { exit !(v > 0) }"'
done

run M=48 K=64 CHANGES="GEMV_TOKENS=2"
check "one launch a call: refused ($rc)" \
  '[[ $rc -ne 0 ]] && grep -qxF "gpubench: gemv_parts: f16 with GEMV_TOKENS=2 is one launch a call: nothing to split" <<<"$out"'
run M=48 K=64 CHANGES="GEMV_TOKENS=2,GEMV_COOP=2,COOP_REG=x"
check "a malformed CHANGES item named ($rc)" \
  '[[ $rc -ne 0 ]] && grep -qxF "gpubench: gemv_parts: CHANGES: \"COOP_REG=x\" is not NAME=integer" <<<"$out"'
run M=48 K=64 CHANGES="GEMV_TOKENS=2,GEMV_COOP=2,COOP_REG=2,GEMV_COOP=1"
check "a define given twice in CHANGES named ($rc)" \
  '[[ $rc -ne 0 ]] && grep -qxF "gpubench: gemv_parts: CHANGES: GEMV_COOP is given twice" <<<"$out"'
run M=48 K=64 CHANGES="GEMV_TOKENS=2,GEMV_COOP=2,COOP_REG=2" DIAG="WIDE_DIAG"
check "a malformed DIAG named, nothing timed ($rc)" \
  '[[ $rc -ne 0 ]] && grep -qxF "gpubench: gemv_parts: DIAG: \"WIDE_DIAG\" is not NAME=integer" <<<"$out" && ! grep -q "whole call" <<<"$out"'
run M=0 K=64
check "M = 0 refused ($rc)" '[[ $rc -ne 0 ]] && grep -qxF "gpubench: gemv_parts: M, K and ITERS must be positive integers" <<<"$out"'
summary
