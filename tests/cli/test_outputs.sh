#!/bin/bash
# Output files of an experiment (tests/examples/copy_table.lua on lavapipe):
# "-" is standard output (the console table then goes to standard error), and
# a run stopped by Ctrl-C leaves well-formed files that say "interrupted" in
# place of the old ones, while the old files stay untouched until then.
set -u
G=$1
. "$(dirname "$0")/lib.sh"

if ! "$G" -e 'require "gpu".open{backend = "vulkan"}' >/dev/null 2>&1; then
  if [[ "${CI:-}" == true ]]; then echo "FAIL: no Vulkan device in CI"; exit 1; fi
  echo "skipped: no Vulkan device"; exit 77
fi
ex=tests/examples/copy_table.lua

"$G" --backend vulkan $ex --sizes 64K --iters 4 --rounds 1 --json - >"$tmp/out" 2>"$tmp/err"; rc=$?
check "--json - runs (rc=$rc)" '[[ $rc -eq 0 ]]'
check "standard output holds only the JSON lines" \
  '"$G" -e "local r = require \"gpubench.report\".read_jsonl(\"$tmp/out\"); assert(r[1].type == \"environment\" and r[2].type == \"cell\" and r[#r].type == \"end\")"'
check "the console table went to standard error" 'grep -q "fastest of 5 runners" "$tmp/err"'

# Ctrl-C once the first cell is in the .partial file: every finished cell
# stays, marked interrupted, and replaces the previous run's file.
echo previous > "$tmp/r.jsonl"; echo previous > "$tmp/r.csv"
"$G" --backend vulkan $ex --sizes 16K,16K,16K,16K,16K,16K,16K,16K --iters 40 --rounds 2 \
  --json "$tmp/r.jsonl" --csv "$tmp/r.csv" >"$tmp/o2" 2>"$tmp/e2" &
pid=$!
# up to 5 minutes: on a loaded 2-core machine the first cell took over the
# 60 s this loop used to allow, and the run was interrupted before any cell
for _ in $(seq 1 3000); do
  grep -q '"type":"cell"' "$tmp/r.jsonl.partial" 2>/dev/null && break
  sleep 0.1
done
check "a finished cell reached the .partial file before the interrupt" "grep -q '\"type\":\"cell\"' \"$tmp/r.jsonl.partial\""
check "the old file is untouched while the run goes on" '[[ $(cat "$tmp/r.jsonl") == previous ]]'
kill -INT $pid
wait $pid; rc=$?
check "Ctrl-C ends the run with status 1 (rc=$rc)" '[[ $rc -eq 1 ]] && grep -q "interrupted" "$tmp/e2"'
check "the JSON file says interrupted, and parses" \
  '"$G" -e "local r = require \"gpubench.report\".read_jsonl(\"$tmp/r.jsonl\"); assert(r[#r].type == \"end\" and r[#r].interrupted == true and r[#r].cells >= 1)"'
check "the CSV file says interrupted" 'tail -1 "$tmp/r.csv" | grep -q "^# interrupted: true"'
check "no .partial file is left" '[[ ! -e "$tmp/r.jsonl.partial" && ! -e "$tmp/r.csv.partial" ]]'
summary
