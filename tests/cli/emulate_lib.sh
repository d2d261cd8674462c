# Sourced by the host-emulation tests (test_*_emulate.sh, gemv_emulate.sh):
# emu_setup [HOST_SOURCE...] finds nvcc (exits 77, skipped, without it), makes
# $tmp (removed at exit) and compiles each host/HOST_SOURCE.c (e.g. ref/gemv)
# into $tmp for the emulation to link ("$tmp"/*.o). Sets NVCC and tmp. Run
# from the repository root.
emu_setup() {
  NVCC=$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; })
  if [ -z "$NVCC" ]; then echo "skipped: no nvcc"; exit 77; fi
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  local c
  for c in "$@"; do
    gcc -O2 -c -Ihost/ref -Ihost/core "host/$c.c" -o "$tmp/$(basename "$c").o" || exit 1
  done
}
