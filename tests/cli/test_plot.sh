#!/usr/bin/env bash
# tools/plot.lua: an SVG rendered from a real (lavapipe) run with one line per
# --by value and the run's points, categories for a text x, null cells left
# out and counted, and clear usage errors (a missing gnuplot included).
set -u
G=$1
. "$(dirname "$0")/lib.sh"

# 20 calls a timing: with 5, a loaded CI machine (two ctest jobs) made a cell "noise" (no
# number to plot) now and then, and the plot had one line
"$G" experiments/gemv_table.lua --backend vulkan --m 256 --k 256 --kernels q4_0,f32 --iters 20 --rounds 1 \
  --json "$tmp/run.jsonl" >/dev/null 2>&1
rc=$?
if [[ $rc -eq 77 ]] || ! [[ -s "$tmp/run.jsonl" ]]; then echo "no Vulkan run (rc=$rc)"; exit 77; fi

out=$("$G" tools/plot.lua "$tmp/run.jsonl" --x k --y gbs --by kernel -o "$tmp/a.svg" 2>&1); rc=$?
check "an SVG from the lavapipe run (rc=$rc: $out)" '[[ $rc -eq 0 ]] && grep -q "<svg" "$tmp/a.svg"'
statuses=$(grep -o '"status":"[a-z]*"' "$tmp/run.jsonl" | tr '\n' ' ')
check "one line per kernel, named in the key (cells: $statuses)" 'grep -q ">q4_0<" "$tmp/a.svg" && grep -q ">f32<" "$tmp/a.svg"'
check "the summary counts lines and points ($out)" 'grep -q "(2 lines, 2 points)" <<<"$out"'
check "axis labels are the fields" 'grep -q ">gbs<" "$tmp/a.svg" && grep -q ">k<" "$tmp/a.svg"'

out=$("$G" tools/plot.lua "$tmp/run.jsonl" --x kernel --y ms -o "$tmp/b.png" 2>&1); rc=$?
check "a PNG with a text x axis (rc=$rc)" '[[ $rc -eq 0 ]] && [[ "$(head -c 4 "$tmp/b.png" | od -An -c | tr -d " ")" == "211PNG" ]]'

# A skipped cell (null y) is left out, not drawn as zero.
head -n 1 "$tmp/run.jsonl" > "$tmp/null.jsonl"
printf '%s\n' '{"type":"cell","kernel":"a","m":1,"ms":1.0}' '{"type":"cell","kernel":"a","m":2,"ms":null,"status":"skipped"}' \
  '{"type":"cell","kernel":"a","m":4,"ms":3.0}' >> "$tmp/null.jsonl"
out=$("$G" tools/plot.lua "$tmp/null.jsonl" --x m --y ms --by kernel -o "$tmp/c.svg" 2>&1); rc=$?
check "a null y is left out and counted (rc=$rc)" \
  '[[ $rc -eq 0 ]] && grep -q "1 of 3 cells have no number in ms" <<<"$out" && grep -q "(1 lines, 2 points)" <<<"$out"'

usage() { # name, expected message, args...
  local name=$1 msg=$2; shift 2
  out=$("$@" 2>&1); rc=$?
  check "$name: exit 2 with \"$msg\" (rc=$rc: $out)" '[[ $rc -eq 2 ]] && grep -qF -- "$msg" <<<"$out"'
}
usage "no file" "a --json output to plot is required" "$G" tools/plot.lua --x m --y ms -o "$tmp/d.svg"
usage "no -o" "--output is required" "$G" tools/plot.lua "$tmp/run.jsonl" --x m --y ms
usage "bad extension" "-o must name a .svg or .png file, got $tmp/d.pdf" "$G" tools/plot.lua "$tmp/run.jsonl" --x m --y ms -o "$tmp/d.pdf"
usage "unknown field" "no cell has the field nothere (--y)" "$G" tools/plot.lua "$tmp/run.jsonl" --x m --y nothere -o "$tmp/d.svg"
usage "missing file" "cannot read $tmp/none.jsonl" "$G" tools/plot.lua "$tmp/none.jsonl" --x m --y ms -o "$tmp/d.svg"
out=$(PATH=/nonexistent "$G" tools/plot.lua "$tmp/run.jsonl" --x k --y gbs -o "$tmp/e.svg" 2>&1); rc=$?
check "without gnuplot: a clear message (rc=$rc: $out)" \
  '[[ $rc -ne 0 ]] && grep -q "gnuplot is not installed (Debian: apt-get install gnuplot-nox" <<<"$out" && ! [[ -e "$tmp/e.svg" ]]'
summary
