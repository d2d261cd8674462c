#!/usr/bin/env bash
# The `gpu` API fuzzer's runner: runs tests/fuzz/gpu_fuzz.lua in child
# processes, first the seeds of tests/fuzz/regressions.txt, then random
# sequences until a time budget is spent, and fails (exit 1) on any child that
# dies by a signal, prints an AddressSanitizer / UndefinedBehaviorSanitizer /
# LeakSanitizer report, runs past its time limit, or reports a bad error
# (FUZZ-BAD lines: an error that is not a proper error of the library's).
# Each failure prints the seed and the command that replays it, and the tail
# of the child's output (the calls it ran last).
#
#   tests/fuzz/run_fuzz.sh GPUBENCH [options] [-- options for gpu_fuzz.lua]
#     --budget S          seconds of random sequences after the regressions
#                         (default: FUZZ_BUDGET, else 120)
#     --seed N            base seed (default: FUZZ_SEED, else the current time)
#     --count N           sequences per child (default 10)
#     --calls N           calls per sequence (default 40)
#     --child-timeout S   time limit of one child (default 60; 3x under ASan)
#     --jobs N            children at a time (default 1)
#     --mode MODE         which call families the children use: all, clean (no
#                         debug library, no metatable edits, no code that runs
#                         inside a call and frees its objects), or mixed (the
#                         default: children take turns: all, clean plus the
#                         re-entrant calls, clean)
#     --no-regressions    skip tests/fuzz/regressions.txt
#     --regressions-only  only the regression seeds
#     --keep DIR          where failing children's logs go (default: a temporary folder)
#     --max-failures N    stop after N failing children (default 20)
# Exit: 0 clean, 1 a finding (or a broken fuzzer), 77 no Vulkan device (a
# failure when CI=true), 2 usage.
set -u

usage() { sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
[[ $# -ge 1 ]] || usage
gpubench=$1
shift
[[ -x $gpubench ]] || { echo "run_fuzz: $gpubench is not an executable" >&2; exit 2; }
gpubench=$(cd "$(dirname "$gpubench")" && pwd)/$(basename "$gpubench")
root=$(cd "$(dirname "$0")/../.." && pwd)
script=tests/fuzz/gpu_fuzz.lua
regressions=$root/tests/fuzz/regressions.txt

budget=${FUZZ_BUDGET:-120} seed=${FUZZ_SEED:-} count=10 calls=40 child_timeout= jobs=1 mode=mixed
run_regressions=1 run_random=1 keep= max_failures=20
child_extra=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --budget) budget=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --count) count=$2; shift 2 ;;
    --calls) calls=$2; shift 2 ;;
    --child-timeout) child_timeout=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --mode) mode=$2; shift 2 ;;
    --no-regressions) run_regressions=0; shift ;;
    --regressions-only) run_random=0; shift ;;
    --keep) keep=$2; shift 2 ;;
    --max-failures) max_failures=$2; shift 2 ;;
    --) shift; child_extra=("$@"); break ;;
    -h|--help) usage ;;
    *) echo "run_fuzz: unknown option $1" >&2; usage ;;
  esac
done
for v in budget count calls jobs max_failures; do
  [[ ${!v} =~ ^[0-9]+$ ]] || { echo "run_fuzz: --${v//_/-} takes a non-negative integer" >&2; exit 2; }
done
[[ -z $seed ]] && seed=$(date +%s)
[[ $seed =~ ^-?[0-9]+$ ]] || { echo "run_fuzz: --seed takes an integer" >&2; exit 2; }
case $mode in mixed|all|clean) ;; *) echo "run_fuzz: --mode takes mixed, all or clean" >&2; exit 2 ;; esac

cd "$root" || exit 2
# shellcheck source=tests/fuzz/signature.sh
. "$root/tests/fuzz/signature.sh"

# Is this a sanitizer build? (Its children are slower: a longer time limit.)
asan=0
if nm -an "$gpubench" 2>/dev/null | grep -q __asan_init || ldd "$gpubench" 2>/dev/null | grep -q libasan; then
  asan=1
fi
[[ -z $child_timeout ]] && child_timeout=$((asan ? 180 : 60))

# Device waits are bounded, so a kernel that never ends is an error, not a hang.
export GPUBENCH_TIMEOUT=${GPUBENCH_TIMEOUT:-5}
# Sanitizer reports must be visible in the output and must fail the child.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
if [[ -f $root/tests/lsan.supp ]]; then
  export LSAN_OPTIONS="suppressions=$root/tests/lsan.supp:print_suppressions=0:${LSAN_OPTIONS:-}"
fi
# Kernels compiled by children are cached (compiling dominates otherwise).
if [[ -z ${GPUBENCH_CACHE_DIR:-} ]]; then
  export GPUBENCH_CACHE_DIR=${TMPDIR:-/tmp}/gpubench-fuzz-cache
fi

# A Vulkan device is needed; lavapipe (Mesa's CPU device) is enough.
if ! probe=$("$gpubench" -e 'local gpu = require "gpu"
  local ok, d = pcall(gpu.open, {backend = "vulkan"})
  if not ok then io.stderr:write(tostring(d), "\n") os.exit(77) end
  print(d.name, gpu.git)' 2>&1); then
  if [[ ${CI:-} == true ]]; then
    echo "run_fuzz: FAILED: no Vulkan device under CI=true: $probe"
    exit 1
  fi
  echo "run_fuzz: skipped: no Vulkan device ($probe)"
  exit 77
fi
echo "run_fuzz: $gpubench on ${probe%%$'\t'*} (git ${probe##*$'\t'})$( ((asan)) && echo ', sanitizer build')"

work=$(mktemp -d "${TMPDIR:-/tmp}/gpu_fuzz.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT
[[ -z $keep ]] && keep=$work/failures
mkdir -p "$keep" || exit 2

total_seqs=0 total_calls=0 children=0 failures=0
declare -A sigs=() sig_example=()

# replay command of a child (what a person would type, from the repository root)
replay_cmd() { # seed count calls flags...
  local s=$1 n=$2 m=$3
  shift 3
  echo "GPUBENCH_TIMEOUT=$GPUBENCH_TIMEOUT timeout $child_timeout $gpubench $script --seed $s --count $n --calls $m $*"
}

# Judges a finished child: rc and log. Prints a report and returns 1 on a finding.
judge() { # id rc log seed count calls label flags...
  local id=$1 rc=$2 log=$3 s=$4 n=$5 m=$6 label=$7
  shift 7
  local flags="$*" why=
  local summary
  summary=$(grep -a '^gpu_fuzz: [0-9]* sequences' "$log" | tail -1)
  if [[ -n $summary ]]; then
    local q c
    q=$(sed -E 's/^gpu_fuzz: ([0-9]+) sequences, ([0-9]+) calls.*/\1/' <<<"$summary")
    c=$(sed -E 's/^gpu_fuzz: ([0-9]+) sequences, ([0-9]+) calls.*/\2/' <<<"$summary")
    total_seqs=$((total_seqs + q)) total_calls=$((total_calls + c))
  else
    # a child that died mid-way: count what it started
    local q c
    q=$(grep -ac '^=== seq ' "$log")
    c=$(grep -acE '^-?[0-9]+#[0-9]+: ' "$log")
    total_seqs=$((total_seqs + q)) total_calls=$((total_calls + c))
  fi
  if grep -aqE 'ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:|SUMMARY: (Address|Undefined|Leak)Sanitizer|AddressSanitizer:DEADLYSIGNAL|failed to read suppressions file' "$log"; then
    why="sanitizer report"
  elif ((rc == 124 || rc == 137)); then
    why="time limit of ${child_timeout}s exceeded (a hang)"
  elif ((rc > 128)); then
    why="killed by signal $((rc - 128)) ($(kill -l $((rc - 128)) 2>/dev/null || echo '?'))"
  elif ((rc == 3)); then
    why="bad errors (FUZZ-BAD)"
  elif ((rc != 0)); then
    why="exit status $rc (the fuzzer itself failed?)"
  elif grep -aq '^FUZZ-BAD' "$log"; then
    why="bad errors (FUZZ-BAD)"
  fi
  [[ -z $why ]] && return 0
  failures=$((failures + 1))
  local saved=$keep/child-$id-seed$s.log
  local sig
  sig=$(fuzz_signature "$log" "$rc")
  sigs[$sig]=$(( ${sigs[$sig]:-0} + 1 ))
  [[ -z ${sig_example[$sig]:-} ]] && sig_example[$sig]="$(replay_cmd "$s" "$n" "$m" "$flags")"
  cp "$log" "$saved"
  local last
  last=$(grep -aE '^=== seq ' "$log" | tail -1 | sed -E 's/^=== seq (-?[0-9]+):.*/\1/')
  [[ $last =~ ^-?[0-9]+$ ]] || last=
  {
    echo "---------------------------------------------------------------- FINDING"
    echo "run_fuzz: FAILED ($label): $why: $sig"
    if [[ $flags == *--program* ]]; then
      echo "  program: ${flags#*--program }"
    else
      echo "  seeds $s..$((s + n - 1)) (last started: ${last:-?}), $m calls each, flags: ${flags:-none}"
    fi
    echo "  replay the child:         $(replay_cmd "$s" "$n" "$m" "$flags")"
    [[ -n $last ]] && echo "  replay the last sequence: $(replay_cmd "$last" 1 "$m" "$flags")"
    echo "  full log: $saved"
    if grep -aq '^FUZZ-BAD' "$log"; then
      echo "  bad errors:"
      grep -a -A2 '^FUZZ-BAD' "$log" | head -30 | sed 's/^/    /'
    fi
    if grep -aqE 'Sanitizer|runtime error:' "$log"; then
      echo "  sanitizer report (start):"
      grep -a -m1 -A25 -E 'ERROR: (Address|Leak)Sanitizer|runtime error:|AddressSanitizer:DEADLYSIGNAL' "$log" | sed 's/^/    /'
    fi
    echo "  the child's last calls:"
    grep -aE '^-?[0-9]+#[0-9]+: |^=== seq |^/.*#[0-9]+: ' "$log" | tail -12 | sed 's/^/    /'
    echo "  the child's last output lines:"
    tail -8 "$log" | cut -c1-300 | sed 's/^/    /'
  } >&2
  return 1
}

# Runs children in the background, at most $jobs at a time.
declare -A pid_info=()
start_child() { # label seed count calls flags...
  local label=$1 s=$2 n=$3 m=$4
  shift 4
  children=$((children + 1))
  local id=$children log=$work/child-$children.log
  ( exec timeout -k 5 "$child_timeout" "$gpubench" "$script" --seed "$s" --count "$n" --calls "$m" "$@" \
      >"$log" 2>&1 </dev/null ) &
  pid_info[$!]="$id|$log|$s|$n|$m|$label|$*"
}
reap_one() { # waits until one child has ended, then judges it
  local pid rc id log s n m label flags
  while :; do
    for pid in "${!pid_info[@]}"; do
      if ! kill -0 "$pid" 2>/dev/null; then
        wait "$pid"
        rc=$?
        IFS='|' read -r id log s n m label flags <<<"${pid_info[$pid]}"
        unset "pid_info[$pid]"
        # shellcheck disable=SC2086
        judge "$id" "$rc" "$log" "$s" "$n" "$m" "$label" $flags
        rm -f "$log"
        return 0
      fi
    done
    sleep 0.1
  done
}
wait_slot() { while ((${#pid_info[@]} >= jobs)); do reap_one; done; }
wait_all() { while ((${#pid_info[@]} > 0)); do reap_one; done; }

t0=$SECONDS

# 1. the regression seeds, every time
if ((run_regressions)) && [[ -f $regressions ]]; then
  nreg=0
  while IFS= read -r line || [[ -n $line ]]; do
    line=${line%%#*}
    read -r -a f <<<"$line"
    ((${#f[@]} == 0)) && continue
    if [[ ${f[0]} == program ]]; then # a saved (minimized) program: independent of the generator
      if [[ ! -f ${f[1]:-} ]]; then
        echo "run_fuzz: $regressions names a missing program: $line" >&2
        failures=$((failures + 1))
        continue
      fi
      wait_slot
      start_child "regression ${f[1]}" 0 1 1 --program "${f[1]}"
      nreg=$((nreg + 1))
      continue
    fi
    s=${f[0]} n=${f[1]:-1} m=${f[2]:-$calls}
    if ! [[ $s =~ ^-?[0-9]+$ && $n =~ ^[0-9]+$ && $m =~ ^[0-9]+$ ]]; then
      echo "run_fuzz: bad line in $regressions: $line" >&2
      failures=$((failures + 1))
      continue
    fi
    wait_slot
    start_child "regression" "$s" "$n" "$m" "${f[@]:3}" "${child_extra[@]}"
    nreg=$((nreg + 1))
  done <"$regressions"
  wait_all
  echo "run_fuzz: $nreg regression seed lines run in $((SECONDS - t0)) s ($failures failing)"
fi

# 2. random sequences until the budget is spent
if ((run_random)); then
  t1=$SECONDS
  k=0
  echo "run_fuzz: random sequences from base seed $seed, $count per child, $calls calls each, for ${budget}s"
  while ((SECONDS - t1 < budget && failures < max_failures)); do
    flags=()
    if [[ $mode == clean ]] || [[ $mode == mixed && $((k % 3)) == 2 ]]; then
      flags=(--no-debug --no-tamper --no-reenter)
    elif [[ $mode == mixed && $((k % 3)) == 1 ]]; then
      flags=(--no-debug --no-tamper)
    fi
    wait_slot
    start_child "random" $((seed + k * count)) "$count" "$calls" "${flags[@]}" "${child_extra[@]}"
    k=$((k + 1))
  done
  wait_all
fi

echo "run_fuzz: $children children, $total_seqs sequences, $total_calls calls in $((SECONDS - t0)) s; $failures failing"
if ((failures > 0)); then
  echo "run_fuzz: failures by cause (count, cause, a replay of the first):"
  for sig in "${!sigs[@]}"; do
    printf '  %4d  %s\n        %s\n' "${sigs[$sig]}" "$sig" "${sig_example[$sig]}"
  done
  echo "run_fuzz: FAILED: $failures failing children (logs in $keep)"
  [[ $keep == "$work/failures" ]] && { trap - EXIT; echo "run_fuzz: (kept $work)"; }
  exit 1
fi
echo "run_fuzz: passed"
exit 0
