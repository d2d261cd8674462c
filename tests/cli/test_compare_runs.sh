#!/usr/bin/env bash
# experiments/compare_runs.lua on two hand-written JSON-lines runs: cells are
# matched by label whatever their order, a >5 % difference is flagged and
# sets exit status 1, noise is never "ok", and bad input is a usage error (2).
set -u
G=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
check() { if eval "$2"; then pass=$((pass + 1)); else echo "FAIL: $1"; fail=$((fail + 1)); fi; }

cat > "$tmp/a.jsonl" <<'J'
{"type":"environment","title":"t"}
{"type":"cell","kernel":"q4_0","shape":"s1","m":64,"k":256,"ms":1.0}
{"type":"cell","kernel":"f32","shape":"s1","m":64,"k":256,"ms":2.0}
{"type":"cell","kernel":"q8_0","shape":"s1","m":64,"k":256,"ms":"noise"}
J
cat > "$tmp/b.jsonl" <<'J'
{"type":"environment","title":"t"}
{"type":"cell","kernel":"f32","shape":"s1","m":64,"k":256,"ms":2.5}
{"type":"cell","kernel":"q8_0","shape":"s1","m":64,"k":256,"ms":3.0}
{"type":"cell","kernel":"q4_0","shape":"s1","m":64,"k":256,"ms":1.04}
J
out=$("$G" experiments/compare_runs.lua --first "$tmp/a.jsonl" --second "$tmp/b.jsonl" 2>&1); rc=$?
check "a moved cell exits 1 (rc=$rc)" '[[ $rc -eq 1 ]]'
check "q4_0 matched across orders, within 5 %" 'grep -Eq "^q4_0 s1 64 256 +1\.00000 +1\.04000 +1\.040 +ok" <<<"$out"'
check "f32 moved 25 %" 'grep -Eq "^f32 s1 64 256 .*1\.250 +moved" <<<"$out"'
check "noise is reported as noise" 'grep -Eq "^q8_0 s1 64 256 .*noise +noise" <<<"$out"'
check "summary line" 'grep -q "3 cells compared; 1 moved more than 5 %; largest difference among resolvable cells 25.0 %" <<<"$out"'
out=$("$G" experiments/compare_runs.lua --first "$tmp/a.jsonl" --second "$tmp/a.jsonl" 2>&1); rc=$?
check "identical runs exit 0 (rc=$rc)" '[[ $rc -eq 0 ]]'
out=$("$G" experiments/compare_runs.lua --first "$tmp/none.jsonl" --second "$tmp/a.jsonl" 2>&1); rc=$?
check "missing file is a usage error (rc=$rc)" '[[ $rc -eq 2 ]] && grep -q "cannot read" <<<"$out"'
# A cell present in only one run is named, whichever run holds it.
cat > "$tmp/c.jsonl" <<'J'
{"type":"cell","kernel":"q4_0","shape":"s1","m":64,"k":256,"ms":1.0}
{"type":"cell","kernel":"q4_k","shape":"s1","m":64,"k":256,"ms":1.0}
J
cat > "$tmp/d.jsonl" <<'J'
{"type":"cell","kernel":"q4_0","shape":"s1","m":64,"k":256,"ms":1.0}
{"type":"cell","kernel":"q6_k","shape":"s1","m":64,"k":256,"ms":1.0}
J
out=$("$G" experiments/compare_runs.lua --first "$tmp/c.jsonl" --second "$tmp/d.jsonl" 2>&1); rc=$?
check "unmatched cells of both runs are named (rc=$rc)" \
  '[[ $rc -eq 0 ]] && grep -qF "cell q4_k s1 64 256 is only in $tmp/c.jsonl" <<<"$out" \
   && grep -qF "cell q6_k s1 64 256 is only in $tmp/d.jsonl" <<<"$out" && grep -q "^1 cells compared" <<<"$out"'
echo "$pass passed, $fail failed"
((fail == 0))
