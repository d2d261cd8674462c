#!/usr/bin/env bash
# Shrinks a failing fuzz sequence to the fewest calls that still fail the same
# way, by removing lines of its program (delta debugging), and prints it.
#
#   tests/fuzz/minimize.sh GPUBENCH SEED [CALLS [gpu_fuzz.lua flags...]]
#   tests/fuzz/minimize.sh GPUBENCH --program FILE
#
# "The same way" is a signature of the first run: for a sanitizer build the
# report's kind and its first frame in gpubench's own code, else the signal,
# the time limit, or the kind of FUZZ-BAD line. Use the sanitizer build when
# there is one: "signal 11" alone lets the shrinking drift to another crash.
# Environment: FUZZ_TIMEOUT (per run, default 60 s), GPUBENCH_TIMEOUT (5).
set -u
[[ $# -ge 2 ]] || { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
gpubench=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
shift
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 2
export GPUBENCH_TIMEOUT=${GPUBENCH_TIMEOUT:-5}
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
[[ -f tests/lsan.supp ]] && export LSAN_OPTIONS="suppressions=$root/tests/lsan.supp:print_suppressions=0:${LSAN_OPTIONS:-}"
export GPUBENCH_CACHE_DIR=${GPUBENCH_CACHE_DIR:-${TMPDIR:-/tmp}/gpubench-fuzz-cache}
limit=${FUZZ_TIMEOUT:-60}
work=$(mktemp -d "${TMPDIR:-/tmp}/gpu_fuzz_min.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT

prog=$work/prog.txt
if [[ $1 == --program ]]; then
  grep -v '^\s*--' "$2" | grep '\S' >"$prog"
  flags=()
else
  seed=$1 calls=${2:-40}
  shift $(($# >= 2 ? 2 : 1))
  flags=("$@")
  "$gpubench" tests/fuzz/gpu_fuzz.lua --seed "$seed" --calls "$calls" "${flags[@]}" --dump | grep '\S' >"$prog"
fi

# shellcheck source=tests/fuzz/signature.sh
. "$root/tests/fuzz/signature.sh"
try() { # FILE -> prints signature (and counts the runs in $work/runs)
  echo >>"$work/runs"
  timeout -k 5 "$limit" "$gpubench" tests/fuzz/gpu_fuzz.lua --program "$1" --quiet "${flags[@]}" \
    >"$work/log" 2>&1 </dev/null
  fuzz_signature "$work/log" $?
}

want=$(try "$prog")
cp "$work/log" "$work/first.log"
echo "minimize: $(wc -l <"$prog") calls fail as: $want" >&2
if [[ $want == pass ]]; then
  echo "minimize: the program does not fail; nothing to shrink" >&2
  tail -5 "$work/log" >&2
  exit 1
fi

# ddmin over lines: remove chunks, halving the chunk size when nothing goes.
mapfile -t lines <"$prog"
chunk=$(((${#lines[@]} + 1) / 2))
while ((chunk >= 1)); do
  removed=0
  i=0
  while ((i < ${#lines[@]})); do
    cand=("${lines[@]:0:i}" "${lines[@]:i+chunk}")
    ((${#cand[@]} == 0)) && { i=$((i + chunk)); continue; }
    printf '%s\n' "${cand[@]}" >"$work/cand.txt"
    if [[ $(try "$work/cand.txt") == "$want" ]]; then
      lines=("${cand[@]}")
      removed=1
    else
      i=$((i + chunk))
    fi
  done
  ((removed)) || chunk=$((chunk / 2))
done

printf '%s\n' "${lines[@]}" >"$work/min.txt"
try "$work/min.txt" >/dev/null
echo "minimize: ${#lines[@]} calls after $(wc -l <"$work/runs") runs ($want):" >&2
printf '%s\n' "${lines[@]}"
echo "minimize: report of the shrunk program (start):" >&2
grep -a -m1 -A30 -E 'ERROR: (Address|Leak)Sanitizer|runtime error:|AddressSanitizer:DEADLYSIGNAL|^FUZZ-BAD' "$work/log" >&2 ||
  tail -15 "$work/log" >&2
