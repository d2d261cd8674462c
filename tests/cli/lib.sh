# Sourced by the tests of tests/cli, after `set -u` and G=$1:
#   . "$(dirname "$0")/lib.sh"
# A temporary folder $tmp removed on exit; the pass and fail counters;
# check NAME CONDITION, which evals CONDITION (so it sees the caller's
# variables as they are then) and counts it, printing "FAIL: NAME" when it
# is false; and summary, the tests' last line: "N passed, M failed", and a
# status of 1 when any failed. Not a test itself: tests/CMakeLists.txt runs
# tests/cli/test_*.sh only.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
check() { if eval "$2"; then pass=$((pass + 1)); else echo "FAIL: $1"; fail=$((fail + 1)); fi; }
summary() { echo "$pass passed, $fail failed"; ((fail == 0)); }
