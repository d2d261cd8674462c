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

# emu_linear SOURCE: builds tests/cuda_host/SOURCE (a Linear emulation, with
# the planar reference it links) and runs it; its status is the test's. EMU_ARCH
# (default -arch=sm_90) targets its device pass: sm_90a, by -gencode, for the wgmma route.
emu_linear() {
  emu_setup ref/formats ref/blocks ref/planar ref/linear ref/parallel ref/random_fill core/random
  "$NVCC" -O2 -Xcompiler -fno-strict-aliasing -std=c++17 ${EMU_ARCH:--arch=sm_90} -Ihost/ref -Ihost/core -Ikernels/cuda \
    -Itests/cuda_host -o "$tmp/emu" "tests/cuda_host/$1" "$tmp"/*.o -lm -lpthread || exit 1
  "$tmp/emu"
}

# emu_gemv SOURCE: builds tests/cuda_host/SOURCE (a GEMV block-code emulation, with
# the GEMV reference it links; EMU_DEFINES: more -D flags) and runs it; its status is the test's. 20011/20014:
# the block code (__host__ __device__) calls the host context; it is instantiated
# for the host only, which is the point.
emu_gemv() {
  emu_setup ref/formats ref/blocks ref/dequant ref/gemv ref/parallel ref/random_fill core/random
  "$NVCC" -O2 -std=c++17 -arch=sm_90 -diag-suppress 20011,20014 ${EMU_DEFINES:-} -Ihost/ref -Ihost/core -Ikernels/cuda \
    -Itests/cuda_host -o "$tmp/emu" "tests/cuda_host/$1" "$tmp"/*.o -lm -lpthread || exit 1
  "$tmp/emu"
}
