#!/bin/bash
# scripts/slurm/submit.sh N EXPERIMENT [ARGS...]: an array of N shard tasks
# (shard_array.sbatch) and the merge job (merge.sbatch) that waits for all of
# them to succeed. GPUBENCH (the binary, default build/gpubench) and
# GPUBENCH_OUT (the results folder, default results/gpubench-<date>) are
# passed to both; extra sbatch options go in SBATCH_ARGS (--partition=...).
set -euo pipefail
if [ $# -lt 2 ] || ! [[ $1 =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: scripts/slurm/submit.sh N EXPERIMENT [ARGS...]" >&2; exit 2
fi
n=$1; shift
here=$(cd "$(dirname "$0")" && pwd)
out=${GPUBENCH_OUT:-results/gpubench-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
export GPUBENCH_OUT=$out
# shellcheck disable=SC2086 # SBATCH_ARGS is a list of options
array=$(sbatch --parsable ${SBATCH_ARGS:-} --array=0-$((n - 1)) --export=ALL "$here/shard_array.sbatch" "$@")
array=${array%%;*}
# shellcheck disable=SC2086
merge=$(sbatch --parsable ${SBATCH_ARGS:-} --dependency=afterok:"$array" --export=ALL "$here/merge.sbatch")
echo "array job $array ($n shards), merge job $merge: $out/merged.jsonl"
