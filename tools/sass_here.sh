#!/usr/bin/env bash
# SASS of a cubin on a machine whose CUDA toolkit has no cuobjdump (this
# project's CI and development machines: nvcc, ptxas and NVRTC only).
# Debian 12's non-free nvidia-cuda-toolkit (CUDA 11.8) has cuobjdump and knows
# sm_90's encoding but not the ELF header CUDA 13 writes (ABI version 8, the
# SM in bits 8-15 of e_flags): a copy with the old header (ABI 7, the SM in
# bits 0-7 and 16-23) disassembles to the same instruction words as CUDA 13's
# cuobjdump on the GPU machine (checked on linear_wgmma_q4, 2026-12-05).
# The package is downloaded once into .deps/cuda-11.8 (84 MB, apt-get
# download with a private non-free source list; nothing is installed).
#   tools/sass_here.sh FILE.cubin > FILE.sass
set -euo pipefail
cubin=${1:?usage: tools/sass_here.sh FILE.cubin}
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$root/.deps/cuda-11.8
if [[ ! -x $dir/usr/bin/cuobjdump ]]; then
  mkdir -p "$dir/apt/lists/partial"
  echo 'deb http://deb.debian.org/debian bookworm non-free' > "$dir/apt/sources.list"
  apt_opts=(-o Dir::Etc::sourcelist="$dir/apt/sources.list" -o Dir::Etc::sourceparts=- -o Dir::State::Lists="$dir/apt/lists")
  apt-get "${apt_opts[@]}" update > /dev/null
  (cd "$dir" && apt-get "${apt_opts[@]}" download nvidia-cuda-toolkit > /dev/null 2>&1)
  dpkg -x "$dir"/nvidia-cuda-toolkit_*.deb "$dir"
  rm -f "$dir"/nvidia-cuda-toolkit_*.deb
fi
tmp=$(mktemp --suffix=.cubin)
trap 'rm -f "$tmp"' EXIT
python3 - "$cubin" "$tmp" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
if d[:4] != b'\x7fELF':
    sys.exit(f"{sys.argv[1]}: not an ELF file")
flags = struct.unpack_from('<I', d, 48)[0]
if d[8] == 8:  # CUDA 13's header: the SM in bits 8-15
    sm = (flags >> 8) & 0xff
    d[8] = 7
    struct.pack_into('<I', d, 48, sm | sm << 16)
open(sys.argv[2], 'wb').write(d)
PY
"$dir/usr/bin/cuobjdump" -sass "$tmp"
