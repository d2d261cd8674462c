#!/bin/bash
# tests/examples/copy_table.lua, the minimal experiment of
# docs/WRITING_EXPERIMENTS.md: the page shows the file as it is, and it runs
# on the Vulkan device CI has (lavapipe) with the safeguards it claims.
set -u
G=$1
. "$(dirname "$0")/lib.sh"

# The page's first lua block is the file, byte for byte.
awk '/^```lua$/ && !done {on = 1; next} on && /^```$/ {on = 0; done = 1} on' docs/WRITING_EXPERIMENTS.md > "$tmp/page.lua"
check "docs/WRITING_EXPERIMENTS.md shows tests/examples/copy_table.lua as it is" 'cmp -s "$tmp/page.lua" tests/examples/copy_table.lua'
check "the example is at most 45 lines" '[[ $(wc -l < tests/examples/copy_table.lua) -le 45 ]]'

out=$(ITERS=100O "$G" tests/examples/copy_table.lua 2>&1); rc=$?
check "a bad knob is a usage error before device work (rc=$rc)" '[[ $rc -eq 2 ]] && grep -q "ITERS=100O is not a positive integer" <<<"$out"'

if ! "$G" -e 'require "gpu".open{backend = "vulkan"}' >/dev/null 2>&1; then
  if [[ "${CI:-}" == true ]]; then echo "FAIL: no Vulkan device in CI"; exit 1; fi
  echo "$pass passed; device part skipped: no Vulkan device"; ((fail == 0)) || exit 1; exit 77
fi
out=$("$G" --backend vulkan tests/examples/copy_table.lua --sizes 64K,256K --iters 4 --validate \
        --json "$tmp/c.jsonl" 2>"$tmp/err"); rc=$?
check "the example runs (rc=$rc: $(head -c 300 "$tmp/err"))" '[[ $rc -eq 0 ]]'
check "a row per size" 'grep -Eq "^ +64 KiB +([0-9.]+|noise)" <<<"$out" && grep -Eq "^ +256 KiB +([0-9.]+|noise)" <<<"$out"'
check "the footer names the method" 'grep -q "fastest of 5 runners" <<<"$out" && grep -q "after a clean L2 flush" <<<"$out"'
check "the footer names the read ceiling" 'grep -q "% read: of" <<<"$out"'
check "--validate ran reversed at 5x" 'grep -q "validation: reversed order, 5x iterations" <<<"$out"'
check "JSON: environment, 2 cells, end" '[[ $(grep -c "\"type\":\"cell\"" "$tmp/c.jsonl") -eq 2 && $(grep -c "\"type\":\"end\"" "$tmp/c.jsonl") -eq 1 ]]'
summary
