#!/bin/bash
# The host emulations' lane pool (tests/cuda_host/emu_staged.cuh, checked by
# tests/cuda_host/lane_pool_check.cu): an exchange between the 32 lanes gives
# every lane the right values; diverging lanes stop the run (exit 1) naming
# where. Needs nvcc; skipped (77) without it. Run from the repository root; $1
# (the gpubench binary) is not used.
set -u
. "$(dirname "$0")/emulate_lib.sh"
emu_setup
"$NVCC" -O2 -std=c++17 -arch=sm_90 -Ikernels/cuda -Itests/cuda_host -o "$tmp/pool" tests/cuda_host/lane_pool_check.cu || exit 1
fail=0
out=$("$tmp/pool" exchange) || fail=1
echo "$out"
expect() { # MODE MESSAGE: exits 1 with MESSAGE
  local got rc
  got=$("$tmp/pool" "$1"); rc=$?
  if [ "$rc" = 1 ] && [[ "$got" == *"$2"* ]]; then echo "ok   $1: $2"
  else echo "not ok $1: exit $rc, printed: $got"; fail=1; fi
}
expect extra "FAIL: lanes diverged: tag 2 at lane 5's extra, another lane's 4 at last"
expect tag "FAIL: lanes diverged: tag 3 at lane 7's own, another lane's 2 at second"
expect early "FAIL: lanes diverged: lane 9 ended while 9 lanes wait at last"
expect late "FAIL: lanes diverged: lane 31 at lane 31's late after 31 lanes ended"
exit $fail
