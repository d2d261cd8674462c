#!/usr/bin/env bash
# An experiment's bad option values end the program with status 2 and a
# one-line message naming the key and the value, before any device work;
# --help prints the generated help on stdout and exits 0.
# Usage: bash tests/cli/test_experiment_options.sh <path-to-gpubench>
set -u
GB=${1:?usage: test_experiment_options.sh <path-to-gpubench>}
fails=0

# expect <status> <stderr substring> <env...> -- <args...>
expect() {
  local want=$1 msg=$2; shift 2
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  local err out st
  err=$(mktemp); out=$(mktemp)
  env "${envs[@]}" "$GB" experiments/bandwidth.lua "$@" >"$out" 2>"$err"
  st=$?
  if [ "$st" != "$want" ] || ! grep -qF -- "$msg" "$err"; then
    echo "FAIL: ${envs[*]} bandwidth.lua $*: status $st (want $want), stderr:"; cat "$err"
    fails=$((fails + 1))
  else
    echo "ok   ${envs[*]} bandwidth.lua $* -> $st: $msg"
  fi
  rm -f "$err" "$out"
}

# GPUBENCH_BACKEND=cuda: on a machine without CUDA, opening the device would
# fail with a different message, so seeing the option error proves the
# options were checked first.
expect 2 "ITERS=100O is not a positive integer" ITERS=100O GPUBENCH_BACKEND=cuda --
expect 2 "ITERS=0 is out of range: must be at least 1" ITERS=0 GPUBENCH_BACKEND=cuda --
expect 2 "PEAK_GBS=nan is not a finite number" PEAK_GBS=nan GPUBENCH_BACKEND=cuda --
expect 2 "--iters=abc is not a positive integer" GPUBENCH_BACKEND=cuda -- --iters abc
expect 2 "--sizes=1M,17 is invalid: 17 is not a multiple of 16 bytes" GPUBENCH_BACKEND=cuda -- --sizes 1M,17
expect 2 "bandwidth: unknown option '--bogus' (see --help)" GPUBENCH_BACKEND=cuda -- --bogus
expect 2 "--order=sideways is not one of forward, reverse, shuffle" GPUBENCH_BACKEND=cuda -- --order sideways
# 2n launches travel as a u32 count and --validate runs 5x: a larger ITERS
# must be refused here, not by the timer after the device work has begun.
expect 2 "ITERS=429496730 is out of range: must be at most 429496729" ITERS=429496730 GPUBENCH_BACKEND=cuda --
expect 2 "--iters=3000000000 is out of range: must be at most 429496729" GPUBENCH_BACKEND=cuda -- --iters 3000000000

# The message is the whole of stderr: no traceback for a usage error.
err=$(ITERS=100O GPUBENCH_BACKEND=cuda "$GB" experiments/bandwidth.lua 2>&1 >/dev/null)
if [ "$(printf '%s\n' "$err" | wc -l)" != 1 ]; then
  echo "FAIL: usage error printed more than one line:"; printf '%s\n' "$err"; fails=$((fails + 1))
else
  echo "ok   one-line usage error: $err"
fi

errf=$(mktemp)
out=$("$GB" experiments/bandwidth.lua --help 2>"$errf")
st=$?
if [ "$st" != 0 ] || ! grep -qF "Usage: bandwidth" <<<"$out" || ! grep -qF "env ITERS" <<<"$out" \
   || ! grep -qF "the flag wins" <<<"$out"; then
  echo "FAIL: --help: status $st, stdout:"; printf '%s\n' "$out"; fails=$((fails + 1))
elif [ -s "$errf" ]; then
  # The help was the whole answer: nothing belongs on stderr.
  echo "FAIL: --help wrote to stderr:"; cat -A "$errf"; fails=$((fails + 1))
else
  echo "ok   --help -> 0 with the generated help on stdout, nothing on stderr"
fi
rm -f "$errf"

# gemv_variants' --grid and --rotate need the device's kernels and L2, so they
# are checked on the Vulkan device (lavapipe) -- but before the read-ceiling
# probe, the first device work: a fresh cache folder must stay empty.
if "$GB" -e 'require "gpu".open{backend = "vulkan"}' >/dev/null 2>&1; then
  variants() { # variants <stderr substring> <args...>
    local msg=$1; shift
    local cache err st
    cache=$(mktemp -d); err=$(mktemp)
    GPUBENCH_CACHE_DIR="$cache" M=64 K=256 ITERS=4 "$GB" --backend vulkan experiments/gemv_variants.lua \
      --kernels q4_0 "$@" >/dev/null 2>"$err"
    st=$?
    if [ "$st" != 2 ] || ! grep -qF -- "$msg" "$err" || [ -e "$cache/ceilings.json" ] \
       || [ "$(wc -l <"$err")" != 1 ]; then
      echo "FAIL: gemv_variants.lua $*: status $st (want 2), cache: $(ls "$cache"), stderr:"; cat "$err"
      fails=$((fails + 1))
    else
      echo "ok   gemv_variants.lua $* -> 2: $msg"
    fi
    rm -rf "$cache" "$err"
  }
  variants "--grid: GEMV_T has an empty value" --grid "GEMV_T=16,,32"
  variants "--grid: GEMV_T has an empty value" --grid "GEMV_T=,"
  variants "--grid: GEMV_T is given twice" --grid "GEMV_T=16;GEMV_T=32"
  variants "--grid: the vulkan q4_0 kernel has no define ROWS" --grid "ROWS=2"
  variants "--rotate: the L2 size of" --rotate
  variants "--grid: an empty grid between '|'" --grid "GEMV_T=16|"
  variants "--grid: the vulkan q4_0 kernel has no define ROWS" --grid "GEMV_T=16|ROWS=2"
  # "A|B": each grid's variants in turn, labelled by their own grid's defines
  cells=$(M=64 K=256 "$GB" --backend vulkan experiments/gemv_variants.lua --kernels q4_0 \
    --grid "GEMV_T=16,32|GEMV_NR=1,2,4" --list-cells 2>/dev/null | tr '\n' ',')
  if [ "$cells" = "q4_0 GEMV_T=16,q4_0 GEMV_T=32,q4_0 GEMV_NR=1,q4_0 GEMV_NR=2,q4_0 GEMV_NR=4," ]; then
    echo "ok   gemv_variants --grid A|B lists both grids' variants"
  else
    echo "FAIL: gemv_variants --grid A|B listed: $cells"; fails=$((fails + 1))
  fi
else
  echo "skip gemv_variants checks: no Vulkan device"
fi

if [ "$fails" -gt 0 ]; then echo "$fails failed"; exit 1; fi
echo "all passed"
