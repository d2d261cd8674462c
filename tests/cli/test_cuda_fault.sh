#!/bin/bash
# A CUDA kernel that faults (an illegal address): the next wait raises a clear
# error naming the kernel, later calls say the device cannot be used, and
# the process exits cleanly (status 1, no signal, no hang). Skipped without
# a CUDA device.
set -u
G=$1
if ! "$G" -e 'require "gpu".open{backend = "cuda"}' >/dev/null 2>&1; then echo "skipped: no CUDA device"; exit 77; fi
. "$(dirname "$0")/lib.sh"
timeout -s KILL 60 "$G" -e '
local gpu = require "gpu"
local d = gpu.open{backend = "cuda"}
local k = d:kernel{file = "tests/kernels/cuda/fault.cu"}
local b = d:buffer(64)
k:launch(1, 32, b, gpu.u64(16))
local ok, err = pcall(d.sync, d)
print("sync:", ok, err)
local ok2, err2 = pcall(d.buffer, d, 64)
print("after:", ok2, err2)
error(err, 0)' >"$tmp/out" 2>"$tmp/err"; rc=$?
cat "$tmp/out" "$tmp/err"
check "exit status 1, no signal (rc=$rc)" '[[ $rc -eq 1 ]]'
check "the fault is named" 'grep -q "CUDA_ERROR_ILLEGAL_ADDRESS" "$tmp/out"'
check "the kernel is named" 'grep -q "the kernel launched last was fault" "$tmp/out"'
check "later calls say the device cannot be used" 'grep -q "after:.*can no longer be used" "$tmp/out"'
summary
