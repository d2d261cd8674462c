#!/bin/bash
# The bad-input matrix: one case per family of crash, hang or lost output a
# user or a fuzzer once found, and per unclear message. Each case checks the
# exit status, the first line of the message, that no signal ended the
# process, that no sanitizer reported anything (the same script runs in the
# ASan+UBSan build), and that it ended within its time bound.
set -u
G=$1
. "$(dirname "$0")/lib.sh"
export GPUBENCH_CACHE_DIR=${GPUBENCH_CACHE_DIR:-$tmp/cache}

# case NAME SECONDS STATUS "FIRST-LINE SUBSTRING" [env VAR=...] -- ARGS...
case_() {
  local name=$1 secs=$2 want=$3 msg=$4; shift 4
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  local t0=$SECONDS
  env "${envs[@]}" timeout -s KILL "$secs" "$G" "$@" >"$tmp/out" 2>"$tmp/err"
  local st=$? dt=$((SECONDS - t0))
  local first
  first=$(grep -v '^\s*$' "$tmp/err" | head -1)
  local why=""
  if ((st == 137)); then why="killed after $secs s (a hang)"
  elif ((st > 128)); then why="ended by signal $((st - 128))"
  elif ((st != want)); then why="status $st, want $want"
  elif ! grep -qF -- "$msg" <<<"$first"; then why="first line '$first' lacks '$msg'"
  elif grep -qE 'Sanitizer|runtime error:|PANIC' "$tmp/err"; then why="sanitizer or panic report"
  fi
  if [[ -z $why ]]; then
    pass=$((pass + 1)); echo "ok   $name ($dt s): $first"
  else
    fail=$((fail + 1)); echo "FAIL $name: $why"; head -c 1500 "$tmp/err"; echo
  fi
}
vk='local gpu = require "gpu"; local d = gpu.open{backend = "vulkan"}'
if ! "$G" -e "$vk" >/dev/null 2>&1; then
  if [[ "${CI:-}" == true ]]; then echo "FAIL: no Vulkan device in CI"; exit 1; fi
  echo "skipped: no Vulkan device"; exit 77
fi

# --- profiler ranges: unbalanced ranges once crashed the driver
case_ "profiler ranges across a sync" 30 0 "" -- -e "$vk; d:profiler_start('a'); d:sync(); d:profiler_stop(); d:profiler_start('b'); d:profiler_start('c'); d:profiler_stop()"
case_ "profiler stop without a start" 30 1 "without a begin" -- -e "$vk; d:profiler_stop()"

# --- include recursion: memory grew without limit
case_ "a shader that includes itself" 60 1 "includes nest deeper than 32" env -- \
  -e "$vk; d:kernel{file = 'tests/bad_inputs/self_include.comp'}"

# --- launch counts: every launch recorded in one command buffer until memory ran out
# (a GPU runs them within the limit, a CPU device does not: either is fine, a crash or an abort is not)
case_ "3 million launches in one batch, recorded in chunks" 120 0 "" \
  env GPUBENCH_TIMEOUT=3 -- -e "$vk; local k = require('gpubench.kernels').load(d, 'copy')
    local a, b = d:buffer(4096), d:buffer(4096); d:record(3000000, k, 1, 256, a, b, 256)
    local ok, err = pcall(d.sync, d); assert(ok or tostring(err):find('did not finish within 3 s', 1, true), err)"
case_ "ITERS past what two-point timing can count" 30 2 "ITERS=3000000000 is out of range" env ITERS=3000000000 -- experiments/bandwidth.lua

# --- a kernel that never ends: waits had no time limit
long="local k = d:kernel{file = 'tests/kernels/vulkan/spin.comp'}; local o = d:buffer(1 << 20)
      k:launch({65535, 65535, 64}, 64, o, 65535)"
case_ "a kernel that never ends: sync" 60 1 "did not finish within 2 s" env GPUBENCH_TIMEOUT=2 -- -e "$vk; $long; d:sync()"
case_ "a kernel that never ends: a download after it" 60 1 "did not finish within 2 s" env GPUBENCH_TIMEOUT=2 -- -e "$vk; $long; o:download(0, 4)"
case_ "a kernel that never ends: the script ends without a sync" 60 0 "warning: closing a vulkan device" env GPUBENCH_TIMEOUT=2 -- -e "$vk; $long"
case_ "a bad GPUBENCH_TIMEOUT" 30 1 "GPUBENCH_TIMEOUT=soon is not a number of seconds" env GPUBENCH_TIMEOUT=soon -- -e "$vk"

# --- the message handler: an error object whose __tostring raises
case_ "an error object whose __tostring raises" 30 1 "error object" -- -e "error(setmetatable({}, {__tostring = function() error('boom') end}))"
case_ "an exit request whose message raises" 30 3 "" -- -e "error(setmetatable({gpubench_exit = 3, message = setmetatable({}, {__tostring = function() error('x') end})}, {}))"

# --- precompiled chunks: a crafted binary chunk crashed the VM
"$G" -e "local f = io.open('$tmp/chunk.luac', 'wb'); f:write(string.dump(function() return 1 end):sub(1, 40)); f:close()"
case_ "a binary chunk as the script" 30 1 "binary" -- "$tmp/chunk.luac"
case_ "a binary chunk through load()" 30 1 "binary" -- -e "assert(load(string.dump(function() end)))"

# --- userdata integrity: a swapped metatable reached C with the wrong struct
case_ "a buffer given the device's metatable" 30 1 "with the metatable of a gpu.device (replaced)" -- \
  -e "$vk; local b = d:buffer(64); debug.setmetatable(b, getmetatable(d)); b:sync()"
case_ "a batch whose user value was replaced, its buffer freed" 30 1 "a buffer that was released" -- \
  -e "$vk; local k = require('gpubench.kernels').load(d, 'copy'); local a, b = d:buffer(4096), d:buffer(4096)
      local bt = d:batch{count = 1, {k, 1, 256, a, b, 256}}; debug.setuservalue(bt, 'junk'); a:free(); bt:submit()"
case_ "a device whose user value was replaced" 30 0 "" -- -e "$vk; debug.setuservalue(d, 5); assert(d.name ~= nil)"

# --- outputs: lost or mixed files, late failures
case_ "--csv and --json to one file" 30 2 "is the same file as --csv" -- experiments/bandwidth.lua --csv "$tmp/x" --json "$tmp/x"
case_ "--csv and --markdown to one file" 30 2 "is the same file as --csv" -- experiments/bandwidth.lua --csv "$tmp/y" --markdown "$tmp//y"
case_ "an output under /proc" 30 2 "folder /proc is not writable" -- experiments/bandwidth.lua --json /proc/x.jsonl
case_ "an output that is a folder" 30 2 "it is a folder" -- experiments/bandwidth.lua --csv "$tmp"

# --- unclear messages
case_ "dev:kernel with a number for file" 30 1 "field 'file' must be a string, got number" -- -e "$vk; d:kernel{file = 3}"
case_ "gpu.u32 with no value" 30 1 "gpu.u32: expected an integer, got no value" -- -e "require('gpu').u32()"
case_ "--device out of range" 30 2 "out of range" -- --device 99999999999 -e "print(1)"
case_ "fill_random u8 past 255" 30 1 "within 0..255" -- -e "$vk; d:buffer(64):fill_random{dtype = 'u8', lo = 0, hi = 300}"
case_ "a GLSL entry other than main" 30 1 "enters at main; entry 'copy' was given" -- -e "$vk; d:kernel{file = 'kernels/vulkan/copy.comp', entry = 'copy'}"
case_ "a shader without #version: nothing on stdout" 30 1 "failed: SHADERC_COMPILATION_ERROR" -- -e "$vk; d:kernel{file = 'tests/bad_inputs/no_version.comp'}"
if [[ -s "$tmp/out" ]]; then fail=$((fail + 1)); echo "FAIL: the shader without #version printed to stdout"; else pass=$((pass + 1)); fi

summary
