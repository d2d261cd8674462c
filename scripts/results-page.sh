#!/usr/bin/env bash
# Builds a results page (Markdown, on stdout) from the logs of
# `scripts/gpu-session.sh bandwidth` and `tables` (unpacked gpu-logs.tgz):
#   scripts/results-page.sh LOGDIR > docs/results/h200-gemv.md
# Every table is the experiment's own --markdown output; forward and reversed
# runs are compared cell by cell with experiments/compare_runs.lua.
set -euo pipefail
logs=$1
G=${G:-build/gpubench}
rev=$(cat "$logs/revision.txt" 2>/dev/null || echo "unknown revision")
smi=$(tail -n +2 "$logs/nvidia-smi.txt" 2>/dev/null || true)
cat <<HDR
# GEMV and bandwidth on an NVIDIA H200

Measured with ${rev}; GPU as \`nvidia-smi\` reported it at the start
(name, driver, SM clock, memory clock, temperature): ${smi}.
Produced by \`scripts/gpu-session.sh bandwidth\` and \`scripts/gpu-session.sh tables\`
(the commands are in that script) and turned into this page by
\`scripts/results-page.sh\`. 1 GB = 1e9 bytes. Times are per launch,
two-point: (t(2n) − t(n)) / n with n = ITERS = 200, device timestamps, one
submission per point; every table ran twice and only the second round is
shown. GEMV GB/s counts weight bytes; every kernel matched the FP64 oracle
(per row |y − y_ref| ≤ 1e-4 Σ|w·x|) on the table's own weights before it was
timed. "L2" cells hold weights that fit in the 60 MB L2: their GB/s is not a
DRAM figure; the \`--rotate\` tables cycle weight copies totalling ≥ 4× L2.

HDR
section() { # section TITLE FILE
  [[ -f "$2" ]] || return 0
  printf '### %s\n\n' "$1"
  sed -e '1{/^## /d}' "$2"
  printf '\n'
}
compare() { # compare A B
  [[ -f "$1" && -f "$2" ]] || return 0
  printf 'Forward vs reversed, cell by cell (`experiments/compare_runs.lua`, from the samples, 2 %% threshold):\n\n```\n'
  "$G" experiments/compare_runs.lua "$1" "$2" | tail -n 1 || true
  "$G" experiments/compare_runs.lua "$1" "$2" | grep -E " (FASTER|SLOWER|MOVED) " || true
  printf '```\n\n'
}
echo "## Bandwidth (experiments/bandwidth.lua --validate)"
echo
for b in cuda vulkan; do
  [[ -f "$logs/bandwidth_$b.log" ]] || continue
  printf '### %s\n\n```\n' "$b"
  cat "$logs/bandwidth_$b.log"
  printf '```\n\n'
done
for b in cuda vulkan; do
  echo "## GEMV, $b (experiments/gemv_table.lua)"
  echo
  section "14336×5120, weights rotated out of L2, with --validate" "$logs/gemv_${b}_14336x5120_rot.md"
  [[ -f "$logs/gemv_${b}_14336x5120_rot.log" ]] && {
    printf '```\n'; sed -n '/^validation:/,$p' "$logs/gemv_${b}_14336x5120_rot.log"; printf '```\n\n'; }
  section "LFM2 shapes, forward order" "$logs/gemv_${b}_forward.md"
  section "LFM2 shapes, reversed order" "$logs/gemv_${b}_reverse.md"
  compare "$logs/gemv_${b}_forward.jsonl" "$logs/gemv_${b}_reverse.jsonl"
  section "LFM2 shapes, --rotate, forward order" "$logs/gemv_${b}_rot_forward.md"
  section "LFM2 shapes, --rotate, reversed order" "$logs/gemv_${b}_rot_reverse.md"
  compare "$logs/gemv_${b}_rot_forward.jsonl" "$logs/gemv_${b}_rot_reverse.jsonl"
done
