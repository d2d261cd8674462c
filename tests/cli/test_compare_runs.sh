#!/usr/bin/env bash
# experiments/compare_runs.lua: verdicts from samples on synthetic runs (the
# same distribution is SAME; a 5 % shift with 0.5 % noise is SLOWER and exits
# 1; the mirror is FASTER and exits 0), two-point rows decided from their
# timings, label matching whatever the order, files without samples compared
# by ratio, unmatched cells named, and bad input as usage errors (2).
set -u
G=$1
. "$(dirname "$0")/lib.sh"

# Synthetic runs: cold rows with `samples` (ms), two-point rows with
# `timings`; each sample is base * (1 + noise * u), u uniform in [-1, 1].
cat > "$tmp/gen.lua" <<'L'
local rng = require "gpubench.rng"
local json = require "cjson"
local path, seed, shift, noise = arg[1], tonumber(arg[2]), tonumber(arg[3]), tonumber(arg[4])
local g = rng.new(seed)
local function s(base) return base * (1 + shift) * (1 + noise * (2 * g:float() - 1)) end
local f = assert(io.open(path, "w"))
f:write(json.encode({ type = "environment", title = "synthetic" }), "\n")
local cells = { { "q4_k big", 0.1 }, { "bf16 big", 0.2 } }
if seed % 2 == 0 then cells = { cells[2], cells[1] } end -- another order
for _, c in ipairs(cells) do
  local samples = {}
  for i = 1, 40 do samples[i] = s(c[2]) end
  f:write(json.encode({ type = "cell", label = c[1], ms = samples[1], samples = samples,
                        summary = { median = samples[1] } }), "\n")
end
local timings = {}
for r = 1, 5 do
  timings[r] = {}
  for i = 1, 4 do
    local n = 100
    local tn = n * s(0.05) + 0.01
    timings[r][i] = { n = n, t_n = tn, t_2n = tn + n * s(0.05) }
  end
end
f:write(json.encode({ type = "cell", label = "two-point", ms = 0.05, t_n = 1, t_2n = 2,
                      samples = { 1, 2 }, timings = timings }), "\n")
f:close()
L
"$G" "$tmp/gen.lua" "$tmp/a.jsonl" 1 0 0.005
"$G" "$tmp/gen.lua" "$tmp/same.jsonl" 2 0 0.005
"$G" "$tmp/gen.lua" "$tmp/slow.jsonl" 3 0.05 0.005
"$G" "$tmp/gen.lua" "$tmp/fast.jsonl" 5 -0.05 0.005

out=$("$G" experiments/compare_runs.lua "$tmp/a.jsonl" "$tmp/same.jsonl" 2>&1); rc=$?
check "same distribution: exit 0 (rc=$rc)" '[[ $rc -eq 0 ]]'
check "same distribution: every cell SAME, other order matched by label" \
  '[[ $(grep -Ec "^(q4_k big|bf16 big|two-point) .* SAME " <<<"$out") -eq 3 ]]'
check "summary line" 'grep -Eq "^3 cells compared: 3 same, 0 faster, 0 slower; geometric mean B/A (0\.99|1\.00)" <<<"$out"'
check "two-point cell decided from its 20 timings" 'grep -Eq "^two-point .* 20/20 samples" <<<"$out"'

out=$("$G" experiments/compare_runs.lua "$tmp/a.jsonl" "$tmp/slow.jsonl" 2>&1); rc=$?
check "5 % slower with 0.5 % noise: exit 1 (rc=$rc)" '[[ $rc -eq 1 ]]'
check "5 % slower: every cell SLOWER with ratio about 1.05" \
  '[[ $(grep -Ec "^(q4_k big|bf16 big|two-point) .* 1\.0[45][0-9]{2} .* SLOWER " <<<"$out") -eq 3 ]]'
check "5 % slower: geometric mean" 'grep -Eq "3 slower; geometric mean B/A 1\.0[45]" <<<"$out"'

out=$("$G" experiments/compare_runs.lua --first "$tmp/a.jsonl" --second "$tmp/fast.jsonl" 2>&1); rc=$?
check "5 % faster (flags): exit 0 (rc=$rc)" '[[ $rc -eq 0 ]]'
check "5 % faster: every cell FASTER" '[[ $(grep -Ec " FASTER " <<<"$out") -eq 3 ]]'

out=$("$G" experiments/compare_runs.lua "$tmp/a.jsonl" "$tmp/slow.jsonl" --threshold 10 2>&1); rc=$?
check "5 % slower under a 10 % threshold: SAME, exit 0 (rc=$rc)" \
  '[[ $rc -eq 0 ]] && [[ $(grep -Ec " SAME " <<<"$out") -eq 3 ]]'

# Files without samples (older outputs): cells matched by fields, compared by ratio.
cat > "$tmp/c.jsonl" <<'J'
{"type":"cell","kernel":"q4_0","shape":"s1","m":64,"k":256,"ms":1.0}
{"type":"cell","kernel":"f32","shape":"s1","m":64,"k":256,"ms":2.0}
{"type":"cell","kernel":"q8_0","shape":"s1","m":64,"k":256,"ms":null,"status":"noise"}
{"type":"cell","kernel":"q4_k","shape":"s1","m":64,"k":256,"ms":1.0}
J
cat > "$tmp/d.jsonl" <<'J'
{"type":"cell","kernel":"f32","shape":"s1","m":64,"k":256,"ms":2.5}
{"type":"cell","kernel":"q8_0","shape":"s1","m":64,"k":256,"ms":3.0}
{"type":"cell","kernel":"q4_0","shape":"s1","m":64,"k":256,"ms":1.01}
{"type":"cell","kernel":"q6_k","shape":"s1","m":64,"k":256,"ms":1.0}
J
out=$("$G" experiments/compare_runs.lua "$tmp/c.jsonl" "$tmp/d.jsonl" 2>&1); rc=$?
check "no samples, 25 % slower: MOVED and exit 1 (rc=$rc)" \
  '[[ $rc -eq 1 ]] && grep -Eq "^f32 s1 64 256 .* 1\.2500 .* MOVED +ratio of ms" <<<"$out"'
check "no samples, 1 %: SAME" 'grep -Eq "^q4_0 s1 64 256 .* 1\.0100 .* SAME" <<<"$out"'
check "a cell without a number: NO DATA with its status" 'grep -Eq "^q8_0 s1 64 256 .*NO DATA +ms: noise" <<<"$out"'
check "cells of one run only are named" \
  'grep -qF "cell q4_k s1 64 256 is only in $tmp/c.jsonl" <<<"$out" && grep -qF "cell q6_k s1 64 256 is only in $tmp/d.jsonl" <<<"$out"'
check "by-field summary" 'grep -q "^3 cells compared: 1 same, 0 faster, 0 slower, 1 moved (no samples), 1 without data" <<<"$out"'

out=$("$G" experiments/compare_runs.lua "$tmp/a.jsonl" 2>&1); rc=$?
check "one file is a usage error (rc=$rc)" '[[ $rc -eq 2 ]] && grep -q "two runs are needed" <<<"$out"'
out=$("$G" experiments/compare_runs.lua "$tmp/none.jsonl" "$tmp/a.jsonl" 2>&1); rc=$?
check "missing file is a usage error (rc=$rc)" '[[ $rc -eq 2 ]] && grep -qF "cannot read $tmp/none.jsonl" <<<"$out"'
printf '{"type":"environment"}\n' > "$tmp/empty.jsonl"
out=$("$G" experiments/compare_runs.lua "$tmp/a.jsonl" "$tmp/empty.jsonl" 2>&1); rc=$?
check "a file without cells is a usage error (rc=$rc)" '[[ $rc -eq 2 ]] && grep -q "holds no cells" <<<"$out"'
printf '{"type":"cell","label":"x","ms":1}\n{"type":"cell","label":"x","ms":2}\n' > "$tmp/twice.jsonl"
out=$("$G" experiments/compare_runs.lua "$tmp/twice.jsonl" "$tmp/a.jsonl" 2>&1); rc=$?
check "a cell twice is an error naming it (rc=$rc)" '[[ $rc -ne 0 ]] && grep -q "holds cell x twice" <<<"$out"'
printf '{"type":"cell",\n' > "$tmp/bad.jsonl"
out=$("$G" experiments/compare_runs.lua "$tmp/bad.jsonl" "$tmp/a.jsonl" 2>&1); rc=$?
check "a line that is not JSON is a usage error naming the line (rc=$rc)" '[[ $rc -eq 2 ]] && grep -q "line 1 is not JSON" <<<"$out"'
summary
