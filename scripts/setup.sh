#!/usr/bin/env bash
# Fresh machine to first result: installs what is missing, builds, and runs the
# main job (experiments/gemv_table.lua) on the best device found — a CUDA GPU,
# else a Vulkan GPU, else the Vulkan CPU device (lavapipe, slow: a small shape).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" build
cd "$root"
if build/gpubench -e 'local d = require "gpu".open(); os.exit(d.device_type == "cpu" and 0 or 1)'; then
  echo "setup: only a CPU Vulkan device was found; running a small GEMV table (M=256 K=1024 ITERS=20)"
  M=256 K=1024 ITERS=20 build/gpubench experiments/gemv_table.lua "$@"
else
  build/gpubench experiments/gemv_table.lua "$@"
fi
