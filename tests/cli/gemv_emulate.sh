# Sourced by test_gemv_emulate.sh and test_gemv_tokens_emulate.sh:
# gemv_emulate SOURCE builds the host emulation tests/cuda_host/SOURCE
# against the FP64 reference twice, the tensor-core path with subnormal f16
# codes (SUBN=1) and with the HSUB2 decode (SUBN=0), and runs both; its
# status is the first failing run's. Needs nvcc and gcc; exits 77 (skipped)
# without nvcc. Run from the repository root.
. "$(dirname "${BASH_SOURCE[0]}")/emulate_lib.sh"
gemv_emulate() {
  local src=tests/cuda_host/$1
  emu_setup ref/formats ref/blocks ref/dequant ref/gemv ref/parallel ref/random_fill core/random
  for subn in 1 0; do
    "$NVCC" -O2 -Xcompiler -fno-strict-aliasing -std=c++17 -arch=sm_90 -DSUBN=$subn -Ihost/ref -Ihost/core -Ikernels/cuda -o "$tmp/emu$subn" \
      "$src" "$tmp"/*.o -lpthread || exit 1
  done
  "$tmp/emu1" || exit 1
  "$tmp/emu0"
}
