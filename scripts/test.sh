#!/usr/bin/env bash
# The whole test suite: installs what is missing, then builds and runs ctest in
# two builds — a normal one (build/) and one with AddressSanitizer and
# UndefinedBehaviorSanitizer (build-asan/). Exits non-zero if either fails.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
jobs=$(nproc)
status=0

echo "== normal build"
"$root/scripts/build.sh" build
(cd "$root/build" && ctest --output-on-failure -j"$jobs" --timeout 600) || status=1

echo "== sanitizer build (ASan + UBSan)"
"$root/scripts/build.sh" build-asan -DGPUBENCH_SANITIZE=ON
# Leaks inside system drivers are suppressed by name in tests/lsan.supp (each
# line says which); anything of gpubench's own fails the run.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:${ASAN_OPTIONS:-}"
export LSAN_OPTIONS="suppressions=$root/tests/lsan.supp:print_suppressions=0:${LSAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
(cd "$root/build-asan" && ctest --output-on-failure -j"$jobs" --timeout 900) || status=1

if ((status == 0)); then echo "test.sh: both builds passed"; else echo "test.sh: FAILED"; fi
exit $status
