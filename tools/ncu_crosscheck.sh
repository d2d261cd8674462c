#!/bin/bash
# tools/ncu_crosscheck.sh EXPERIMENT [ARGS...]: gpubench's cold time of each
# cell beside Nsight Compute's duration and DRAM bytes for one call of it
# (tools/ncu_crosscheck.lua says how). GPUBENCH, NCU, CELLS, JSON as there.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
G=${GPUBENCH:-}
if [[ -z $G ]]; then
  for c in "$here/build-dist/gpubench" "$here/build/gpubench"; do [[ -x $c ]] && { G=$c; break; }; done
fi
[[ -n $G ]] || { echo "ncu_crosscheck: no gpubench binary (set GPUBENCH)" >&2; exit 2; }
export GPUBENCH=$G
exec "$G" "$here/tools/ncu_crosscheck.lua" "$@"
