#!/usr/bin/env bash
# One call on a GPU server that has no Lua or Vulkan packages: the packed
# build (scripts/pack-for-gpu.sh, Lua & co. linked statically) travels with
# the tree, the Vulkan loader travels as .deb files in .gl/ (see the device
# notes), and every log goes to $LOGS, packed at the end into
# $OUT/gpu-logs.tgz (the device tool brings back at most 8 files). A call is
# limited to 10 minutes: run the phases in separate calls.
#
#   scripts/gpu-session.sh check       # device list, backend and Lua tests on both backends, the CUDA fault test
#   scripts/gpu-session.sh sanitize    # compute-sanitizer memcheck and racecheck over every CUDA kernel's test
#   scripts/gpu-session.sh sanitize_new  # the same over the int8 q4_k GEMV's and the SwiGLU fused kernel's tests only (SAN_SWIGLU_ONLY="test name": that SwiGLU test alone)
#   scripts/gpu-session.sh flush       # 14336x5120 cold cells with both flushes; ncu crosscheck; DRAM writes after each flush
#   scripts/gpu-session.sh probe       # DRAM writes of a cold call after each flush (tools/flush_probe.lua under ncu)
#   scripts/gpu-session.sh stopping    # two stopping-rule cells, three runs
#   scripts/gpu-session.sh bandwidth   # bandwidth --validate on both backends
#   scripts/gpu-session.sh tables [cuda|vulkan]   # the GEMV tables for docs/results
#   scripts/gpu-session.sh compare DIR [cuda|vulkan]  # gemv_table and bandwidth, this build and DIR's, same commands
#   scripts/gpu-session.sh kernels     # the Linear, vendor GEMM, MoE and SwiGLU tests on both backends (correctness first)
#   scripts/gpu-session.sh linear [cuda|vulkan]   # linear_suite --suite all, a T sweep, the ncu crosscheck of one point (LINEAR_EXTRA=0: the suite only)
#   scripts/gpu-session.sh moe [cuda|vulkan]      # moe_scaling, every config (MOE_CONFIGS), both regimes (MOE_ARGS: more options, MOE_LIMIT: seconds per run)
#   scripts/gpu-session.sh swiglu [cuda|vulkan]   # swiglu_ab, every shape, both modes and regimes
#   scripts/gpu-session.sh tune        # linear_variants sweeps of the CUDA Linear routes; ncu sections of three points
#   scripts/gpu-session.sh stagger     # the wgmma route's staggered warpgroups (LN_STAGGER) at five formats, LN_WS and LN_WPF for q4, ABBA; the wgmma GPU tests
#   scripts/gpu-session.sh wgncu       # ncu's full set and per-instruction SASS page of one wgmma call at T = 1024 (WGNCU)
#   scripts/gpu-session.sh half        # LN_HALF (weights and x in fp16) against the bf16 codes, staggered or not, ABBA at large points (HALF_PTS)
#   scripts/gpu-session.sh half_check  # the wgmma GPU tests, then --suite all on CUDA twice
#   scripts/gpu-session.sh half_rule   # LN_HALF at the sliced and small-grid points (the table's rule), ABBA, then --suite all twice
#   scripts/gpu-session.sh xcopy       # LN_XCOPY (x's copies from addresses set once) against 0, ABBA, every format (XCOPY_PTS)
#   scripts/gpu-session.sh wgnext      # xcopy, then half_rule, in one call
#   scripts/gpu-session.sh stage       # the staged memory-bound Linear route (LN_STAGE) against the direct one, ABBA
#   scripts/gpu-session.sh wgclose     # the wgmma route's LN_CLOSE = 0 against 1: its GPU test, the SASS waits of each, ABBA at T = 1024, 256
#   scripts/gpu-session.sh data        # the same bytes read as zeros, random bytes and normal bf16; swiglu_ab's paths
#   scripts/gpu-session.sh tokens_tune [T]  # gemv_variants at T tokens (default 8): scalar vs tensor-core paths (f16, int8), geometry
#   scripts/gpu-session.sh vkidot      # Vulkan q8_0/q4_0 at T = 8, 4, 2: float kernels against the T-token integer loop (GEMV_IDOT=1, 2), both orders, after the Vulkan GEMV test
#   scripts/gpu-session.sh dynab       # the kept tensor-core geometries with static and forced-dynamic stages (DYNAMIC=1), both orders
#   scripts/gpu-session.sh q8tc        # the f16 tensor-core q8_0 kernel (TC=1; QTC_FORMAT=q4_0 for q4_0's, Q8TC_TEST=0 skips the test, Q8TC_NCU="" the ncu): its GPU test, its geometries against the int8 kernel and the integer dot at T = 8 (both orders, two ITERS), 4 (both orders), 2, 1 (Q8TC_RUNS); ncu of one call (Q8TC_NCU)
#   scripts/gpu-session.sh i8          # the int8 tensor-core q4_k kernel: its GPU test, the default at T = 2, 4, 8, then I8 geometries, both orders, two ITERS
#   scripts/gpu-session.sh limits      # ncu sections of one call each: q4_k T=8 (integer dot, int8), Linear q4 T=1, SwiGLU fused and cuBLAS, MoE grouped
#   scripts/gpu-session.sh gemv_sweep  # gemv_variants sweeps at M=GSWEEP_M (131072), both orders (GSWEEP="FORMAT:GRID ...")
#   scripts/gpu-session.sh ks          # slices of K (LN_KS=1,2,4) at T=KS_T (2) on the dot route's short points (KS_POINTS="q:N:K ..."), the Linear GPU test
#   scripts/gpu-session.sh dot         # the Linear integer-dot route: GPU test, dot vs gemv ABBA (DOT_POINTS), the suite
#   scripts/gpu-session.sh vkdot       # the Vulkan Linear dot route: its test, dot against gemv at the suite's large T=1,2 points (VKDOT_POINTS, VKDOT_GRID), the Vulkan suite
#   scripts/gpu-session.sh gemv_ncu    # ncu sections of rotated GEMV calls (GEMV_NCU="FORMAT:M:DEFINES ...")
#   scripts/gpu-session.sh dense_tc    # the dense tensor-core GEMV (bf16, f16 MMA=1): GPU test, the FMA default and the staged geometries at T = 8, 4, 2 (DTC_ORDER, DTC_TOKENS), a Vulkan dense sweep at T = 8
#   scripts/gpu-session.sh tokens [cuda|vulkan]  # multi-token GEMV: the tests, then gemv_table --rotate --tokens 1,2,4,8
#   scripts/gpu-session.sh moe_geo     # moe_scaling grouped kernel geometries (--grouped-geometry), qwen3 gate_up, m = 8, 32, 64
#   scripts/gpu-session.sh devices     # --devices 0,0 (two workers on one GPU, merged), split mode, the spread report
#   scripts/gpu-session.sh dynsmem     # dynamic shared memory: its tests, then q8_0 TC / bf16 TC geometries past 48 KiB and q4_0 TC against its int8 kernel at T = 8 (A B B A), SwiGLU fused ones (DYN_SW=0 skips)
#   scripts/gpu-session.sh overlap     # launch overlap: its tests, then plain vs overlapped (released at the block's start and at its exit) for SwiGLU per shape and the GEMV, A B C C B A
#   scripts/gpu-session.sh vkq6        # Vulkan q6_k float against its integer kernel at T = 1 and 8, both orders, after the Vulkan GEMV test
#   scripts/gpu-session.sh readgap     # the rotated GEMV table at 14336x5120 (both orders) beside the pure read at each format's bytes
#   scripts/gpu-session.sh moe_ncu     # ncu sections of one cold MoE grouped step, qwen3 gate_up, m = MOE_NCU_M (1 8)
#   scripts/gpu-session.sh vkmoe_idot  # the Vulkan MoE integer paths (MOE_IDOT=1: grouped, batched) against the float ones, after the Vulkan MoE test
#   scripts/gpu-session.sh vkclocks    # the replay on Vulkan and CUDA with nvidia-smi's clocks and P-state every 100 ms
#   scripts/gpu-session.sh vkspin      # the Vulkan suite and replay with clocks.spin_up, nvidia-smi's clocks beside
#   scripts/gpu-session.sh vkfused_idot # the fused shader's float and integer paths A/B, then the integer grouped shader's geometry
#   scripts/gpu-session.sh vkgeo_big   # each quantized format's Vulkan integer kernel over GEMV_T x GEMV_NR at GEO_M (131072) x 5120
#   scripts/gpu-session.sh fixed       # the cold sample's fixed cost taken apart on both backends (tools/fixed_cost_probe.lua), then the Vulkan suite (FIXED_SUITE=0 skips)
#   scripts/gpu-session.sh gemv_next   # the fixed-cost probes (no suite), then xpre (q4_k, q8_0), vkxpre (q4_k, q4_0) at T = 8 both orders and vkswiglu_out at 13824x5120, in one call
#   scripts/gpu-session.sh xpre        # x quantized once per call (XPRE=1) against per block, every int8 format at T = 8 (both orders) and 4 (XPRE_FORMATS, XPRE_RUNS, XPRE_FLAGS)
#   scripts/gpu-session.sh guard       # the int8 oracle test (every layout, guard and staged variant), then the epilogues without their branch past T (I8_GUARD=0) against the default at T = 4, 6 (both orders) and 8
#   scripts/gpu-session.sh staged      # q4_k/q5_k/q8_0/q4_0 weights staged through cp.async rings per warp (STAGED=2..4, XPRE=2) beside the table's picks, T = 8 both orders and 4
#   scripts/gpu-session.sh next18      # the CUDA T-row tables with the guard/staged rules (T = 1, 2, 4, 8), then vkcoop's test and T = 8 A/B for q4_k, q8_0, q6_k
#   scripts/gpu-session.sh picks       # T = 2..7 (PICKS_T): each int8 format's rule beside I8_GUARD=0 and the staged geometries (unguarded), both orders; T = 8's staged picks at 600 iterations
#   scripts/gpu-session.sh next17      # after guard (its own call): staged, the T = 1, 2, 4, 8 tables on both backends, ncu's sampled timeline of q4_k T = 8
#   scripts/gpu-session.sh xfrag       # x's digits in the mma's fragment order (XPRE=2) against the shared layout (XPRE=1), every int8 format at T = 8 (both orders) and 4; ncu of one call (XFRAG_NCU)
#   scripts/gpu-session.sh xpre_geo    # XPRE=1 geometries past the first A/B's (8 slices, 16 warps) at T = XPRE_GEO_T (8), both orders, beside the table's kernel
#   scripts/gpu-session.sh vkcoop      # Vulkan q8_0/q4_0/q4_k/q5_k/q6_k (f16/bf16: fp16) on int8 cooperative matrices (GEMV_COOP=1): its oracle test, then geometries beside the table's integer kernels at T = 8 (both orders), 4, 1; CUDA's T-row rules at 8 and 4 (VKCOOP_FORMATS)
#   scripts/gpu-session.sh vkxpre      # Vulkan q4_k/q5_k/q6_k/q8_0/q4_0 with x quantized once per call (GEMV_XPRE=1) against per workgroup, geometries, T = 8 (both orders), 4, 1 (VKXPRE_RUNS)
#   scripts/gpu-session.sh i8ab        # the int8 tensor-core kernel of I8AB_FORMAT (q5_k) against the integer dot: its GPU test, then geometries at T = 8, 5, 4, 3 (I8AB_RUNS), both orders at 8 and 5
#   scripts/gpu-session.sh table_big   # the rotated GEMV table at 131072 x 5120, CUDA and Vulkan (BIG_BACKENDS, BIG_LIMIT)
#   scripts/gpu-session.sh next27      # f32 W in B (hi + lo on the fp16 matrices) and q4_0's: GPU oracle test, A/B against the table's kernels at T = 8, 6, 4
#   scripts/gpu-session.sh next26      # Vulkan f32 at T = 8 and 6: a GEMV_T x GEMV_NR grid, validated
#   scripts/gpu-session.sh next25      # SwiGLU W in B with unconditional x loads against the scalar kernels, 11008 x 4096 and 13824 x 5120, M = 1, 4, 7, 8
#   scripts/gpu-session.sh next24      # q8_0 W in B (16-byte stage stores) A/B at T = 8; the f16 rule at 1024/4096 rows and k = 14336; SwiGLU M rule at 11008 x 4096
#   scripts/gpu-session.sh next23      # q8_0 W in B after the in-lane sums: GPU oracle test, A/B at T = 8 (1..4 tiles) and 4
#   scripts/gpu-session.sh next22      # after next21: q8_0 W in B (int8) test and A/B at T = 8, 4; q8_0 tables; SwiGLU with the M rule, both backends; f16 at m = 8448, 16896
#   scripts/gpu-session.sh next21      # after next20: COOP_REG=3 at T = 5..7 and a T = 8 grid, the f16/bf16 tables with the rule (both backends), SwiGLU W in B at M = 4..8
#   scripts/gpu-session.sh next20      # what 2026-12-06 left unmeasured: COOP_REG=3 against scalar and COOP_REG=2 (T = 8, 4, validated), SwiGLU SW_WB=1 A B B A
#   scripts/gpu-session.sh wide        # COOP_REG=2 (f16/bf16 on fp16 matrices from 16-byte loads): oracle test, T = 8 grid beside the scalar kernel
#   scripts/gpu-session.sh coop_layout # the fp16 cooperative-matrix layouts (which components pair k), then next19's registers-filled kernels
#   scripts/gpu-session.sh next19      # vkreg at one shape without the GEMV test, q8_0's staged coop kernel at T = 8, the CUDA T-row tables (T = 8, 4, 2, 1)
#   scripts/gpu-session.sh vkreg       # Vulkan operands filled from registers: SwiGLU SW_COOP=1 (test, A B B A per shape, M = 1, 4, 8), the f16/bf16 GEMV COOP_REG=1 at T = 8, the GEMV coop oracle test
#   scripts/gpu-session.sh vkswiglu_out # the Vulkan SwiGLU kernels with 4 outputs a workgroup (SW_OUT=4) against 2, A B B A processes per shape, M = 1, 4, 8
#   scripts/gpu-session.sh swiglu_geo  # swiglu_ab fused geometries (WARPS, UNROLL, KSPLIT, STAGES) at two shapes, rotated graph, M = 1 and 8 (SWGEO_TAG names a second pass; SWGEO_M, SWGEO_MODE, SWGEO_FLAGS)
set -uo pipefail
phase=${1:-check}
arg2=${2:-}
set -- "$@" "" "" ""
OUT=${OUT:-$PWD/gpu-out}
LOGS=${LOGS:-/tmp/gpu-logs}
mkdir -p "$OUT" "$LOGS"
export GPUBENCH_CACHE_DIR=${GPUBENCH_CACHE_DIR:-/tmp/gpubench-cache}
# The compiled kernels travel between calls (a fresh machine would compile
# every kernel again): .gpu-cache/kernels.tgz in, $OUT/kernels.tgz out. The
# read ceiling is not carried: it is measured in the call that compares to it.
if [[ -f .gpu-cache/kernels.tgz && ! -d $GPUBENCH_CACHE_DIR ]]; then
  mkdir -p "$GPUBENCH_CACHE_DIR" && tar xzf .gpu-cache/kernels.tgz -C "$GPUBENCH_CACHE_DIR"
fi
trap 'tar czf "$OUT/gpu-logs-$phase.tgz" -C "$LOGS" .; [[ -d $GPUBENCH_CACHE_DIR ]] &&
  tar czf "$OUT/kernels.tgz" --exclude=ceilings.json -C "$GPUBENCH_CACHE_DIR" .' EXIT
if [[ -d .gl ]] && ! ldconfig -p | grep -q libvulkan.so.1; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
fi
if [[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json && -z "${VK_DRIVER_FILES:-}" ]]; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi
BIN=${BIN:-build-dist}
G=$BIN/gpubench
NCU=${NCU:-$(command -v ncu || echo /usr/local/cuda/bin/ncu)}
SAN=${SAN:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
echo "gpubench $($G -e 'print(require "gpu".git)' 2>/dev/null), $(date -u +%Y-%m-%dT%H:%MZ)" > "$LOGS/revision.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv \
  > "$LOGS/nvidia-smi-$phase.txt" 2>&1
status=0
run() { # run NAME CMD... : logs to $LOGS/NAME.log, prints a one-line verdict
  local name=$1; shift
  local t0=$SECONDS
  "$@" > "$LOGS/$name.log" 2>&1
  local rc=$?
  printf '%-34s rc=%d %4ds  %s\n' "$name" "$rc" $((SECONDS - t0)) \
    "$(grep -E 'passed|checks|skipped|ERROR SUMMARY' "$LOGS/$name.log" | tail -1)"
  ((rc == 0)) || status=1
  return $rc
}

swgeo() { # swgeo NAME N,K GEOMETRY: swiglu_ab's fused kernel at one geometry, rotated, M = SWGEO_M (1,8),
  # mode SWGEO_MODE (graph), more swiglu_ab options in SWGEO_FLAGS (e.g. --overlap), on SWGEO_BACKEND (cuda)
  run "$1" timeout 60 $G --backend ${SWGEO_BACKEND:-cuda} experiments/swiglu_ab.lua --shape $2 --m-values ${SWGEO_M:-1,8} \
    --mode ${SWGEO_MODE:-graph} --regime rotated --trials 4 --rounds 1 --geometry $3 ${SWGEO_FLAGS:-} --json "$LOGS/$1.jsonl"
  grep -E '^custom' "$LOGS/$1.log"
}

variants() { # variants NAME FORMAT M K GRID: one validated gemv_variants process (rotated, reversed at 5x the iterations)
  run "$1" timeout ${VARIANTS_LIMIT:-200} env M=$3 K=$4 ITERS=200 $G --backend vulkan experiments/gemv_variants.lua --rotate \
    --rounds 1 --validate --kernels $2 --grid "$5" --json "$LOGS/$1.jsonl"
  grep -E "^$2|rror" "$LOGS/$1.log"
}

fixed_probes() { # fixed_probes [PATTERN]: tools/fixed_cost_probe.lua on CUDA then Vulkan, each log whole or the lines
  # PATTERN matches
  local b
  for b in cuda vulkan; do
    run "fixed_$b" timeout 120 env BACKEND=$b $G tools/fixed_cost_probe.lua
    if [[ -n ${1:-} ]]; then grep -E "$1" "$LOGS/fixed_$b.log"; else cat "$LOGS/fixed_$b.log"; fi
  done
}

linear_suites() { # linear_suites: linear_suite --suite all on Vulkan then CUDA without the vendor column; the T = 1 rows,
  # the fixed cost and the wall time of each
  local b
  for b in vulkan cuda; do
    run "suite_$b" timeout 200 $G --backend $b experiments/linear_suite.lua --suite all --vendor off \
      --json "$LOGS/suite_$b.jsonl"
    grep -E "fixed cost:|wall time| T=1 |rror" "$LOGS/suite_$b.log" | cut -c1-150 | head -24
  done
}

vkf32_tables() { # vkf32_tables: Vulkan f32 through gemv_table at T = 6 and 8, 14336 x 5120 rotated (for_device's W in B)
  local T
  for T in 6 8; do
    run "vkf32_table_T$T" timeout 120 env M=14336 K=5120 $G --backend vulkan experiments/gemv_table.lua --kernels f32 \
      --rotate --tokens $T --json "$LOGS/vkf32_table_T$T.jsonl"
    grep -E "^f32|^\* f32|rror" "$LOGS/vkf32_table_T$T.log"
  done
}

moe_kernel_re() { # moe_kernel_re VARIANT: the CUDA kernel name a MoE variant's launches match (ncu -k regex:)
  case $1 in grouped) echo grouped ;; fused_gate_up) echo fused ;; *) echo pairs ;; esac
}

stall_lines() { # stall_lines LOG: ncu's warp stall reasons of 0.3 cycles per issue or more, the duration and activity
  grep -E "stalled|duration|issue_active|warps_active" "$1" | sed 's/smsp__average_warps_issue_stalled_//' \
    | awk '$NF+0 >= 0.3 || /duration|pct_of_peak/'
}

gemv_runs() { # gemv_runs PREFIX TAG FORMAT "ORDER:ITERS:T ..." GRID LIMIT [FLAGS...]: one gemv_variants process per run
  # at 14336 x 5120 rotated, TK in GRID standing for the run's T; logs PREFIX_FORMAT_ORDER_ITERS_TT TAG
  local pre=$1 tag=$2 f=$3 runs=$4 grid=$5 lim=$6 o it tk n oit
  shift 6
  for oit in $runs; do
    IFS=: read -r o it tk <<< "$oit"
    n="${pre}_${f}_${o}_${it}_T$tk$tag"
    run "$n" timeout $lim env M=14336 K=5120 ITERS=$it $G --backend cuda experiments/gemv_variants.lua \
      --rotate --rounds 1 --kernels $f --order $o "$@" --grid "${grid//TK/$tk}" --json "$LOGS/$n.jsonl"
    grep -E "^$f" "$LOGS/$n.log" | grep -v invalid
  done
}

gemv_ncu() { # gemv_ncu CELL...: ncu sections of one rotated GEMV call per cell (FORMAT:M:DEFINES, defines
  # ';'-separated; k 5120), every kernel of the call (an XPRE prep too)
  local S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy
     --section LaunchStats --section SchedulerStats --section ComputeWorkloadAnalysis --section SourceCounters"
  local cell f m d n
  for cell in "$@"; do
    IFS=: read -r f m d <<< "$cell"
    n="ncu_gemv_${f}_${m}_${d//[=;]/_}"
    run "$n" timeout 150 "$NCU" --cache-control none --clock-control none $S --profile-from-start off \
      env M=$m K=5120 $G --backend cuda experiments/gemv_variants.lua --rotate --rounds 1 --kernels $f --grid "$d" \
      --profile "$f ${d//;/ }"
    grep -E '^  [a-z_0-9]+ \(|Duration|DRAM Throughput|L1/TEX Cache Throughput|SM Active Cycles|Elapsed Cycles|Achieved Occupancy|Registers Per|Issue Slots Busy|No Eligible|Stall|Waves Per SM|Eligible Warps|L2 Hit|L1/TEX Hit|Shared Memory|Executed Ipc A|Warp Cycles Per Issued' \
      "$LOGS/$n.log" | head -40
  done
}

phase_xpre() {
  # x quantized once per call (XPRE=1: a first launch, docs/kernels/cuda-gemv.md, "x quantized once per call")
  # against the int8 kernel quantizing x per block (XPRE=0), every int8 format: its oracle test first (XPRE_TEST=0
  # skips), then ORDER:ITERS:T runs at 14336 x 5120 rotated, one process per run and format, with the table's
  # kernel at that T beside them (I8=0: the integer dot; TC=1 for q8_0/q4_0) and XPRE=1's geometries
  # (XPRE_FLAGS: e.g. --overlap, the prep overlapped with the kernel's start)
  [[ ${XPRE_TEST:-1} == 1 ]] && GPUBENCH_TEST_ONLY="XPRE=1" run lua_test_gemv_xpre timeout 300 $G tests/lua/test_gemv_cuda_i8.lua
  [[ ${XPRE_TEST:-1} == 1 ]] && tail -1 "$LOGS/lua_test_gemv_xpre.log"
  # XPRE_SAN=1: memcheck over the same test (the workspace's pad is read by warps without a chunk)
  [[ ${XPRE_SAN:-0} == 1 ]] && GPUBENCH_TEST_ONLY="XPRE=1 and 2 int8 kernels match" run san_memcheck_xpre \
    timeout ${SAN_LIMIT:-240} "$SAN" --tool memcheck --report-api-errors no --error-exitcode 9 $G tests/lua/test_gemv_cuda_i8.lua
  [[ ${XPRE_SAN:-0} == 1 ]] && tail -3 "$LOGS/san_memcheck_xpre.log"
  for f in ${XPRE_FORMATS:-q4_k q5_k q6_k q8_0 q4_0}; do
    # 15 processes of about 10 variants by default: within one 10-minute call
    g="GEMV_TOKENS=TK;I8=1;WARPS=4;KSPLIT=2;XPRE=0,1|GEMV_TOKENS=TK;I8=1;XPRE=1;WARPS=2,8;KSPLIT=2,4"
    g="$g|GEMV_TOKENS=TK;I8=1;XPRE=1;WARPS=4;KSPLIT=1,4|GEMV_TOKENS=TK;I8=1;XPRE=1;WARPS=4;KSPLIT=2;PREFETCH=1"
    g="$g|GEMV_TOKENS=TK;I8=0"
    [[ $f == q8_0 || $f == q4_0 ]] && g="$g|GEMV_TOKENS=TK;TC=1"
    gemv_runs xpre "" $f "${XPRE_RUNS:-forward:200:8 reverse:200:8 forward:200:4}" "$g" ${XPRE_LIMIT:-120} ${XPRE_FLAGS:-}
  done
}

phase_xfrag() {
  # x's digits in the mma's fragment order (XPRE=2: one 16-byte load a lane per run, docs/kernels/cuda-gemv.md,
  # "x in fragment order") against the shared layout in global memory (XPRE=1) at the same geometries: the oracle
  # test first (XFRAG_TEST=0 skips), then ORDER:ITERS:T runs at 14336 x 5120 rotated, one process per run and format,
  # the table's other kernels beside (I8=0; TC=1 for q8_0/q4_0), or XFRAG_GRID (TK for T; XFRAG_TAG ends the logs' names);
  # then ncu of XFRAG_NCU cells (FORMAT:DEFINES)
  [[ ${XFRAG_TEST:-1} == 1 ]] && GPUBENCH_TEST_ONLY="XPRE=1 and 2 int8 kernels match" run lua_test_gemv_xfrag \
    timeout 300 $G tests/lua/test_gemv_cuda_i8.lua
  [[ ${XFRAG_TEST:-1} == 1 ]] && tail -1 "$LOGS/lua_test_gemv_xfrag.log"
  for f in ${XFRAG_FORMATS:-q4_k q5_k q6_k q8_0 q4_0}; do
    g="GEMV_TOKENS=TK;I8=1;XPRE=1,2;WARPS=4;KSPLIT=2|GEMV_TOKENS=TK;I8=1;XPRE=1,2;WARPS=8;KSPLIT=4"
    g="$g|GEMV_TOKENS=TK;I8=1;XPRE=1,2;WARPS=4;KSPLIT=4|GEMV_TOKENS=TK;I8=1;XPRE=2;WARPS=4;KSPLIT=2;PREFETCH=1"
    g="$g|GEMV_TOKENS=TK;I8=1;XPRE=2;WARPS=2;KSPLIT=4,8|GEMV_TOKENS=TK;I8=0"
    [[ $f == q8_0 || $f == q4_0 ]] && g="$g|GEMV_TOKENS=TK;TC=1"
    gemv_runs xfrag "${XFRAG_TAG:-}" $f "${XFRAG_RUNS:-forward:200:8 reverse:200:8 forward:200:4}" "${XFRAG_GRID:-$g}" \
      ${XFRAG_LIMIT:-120} ${XFRAG_FLAGS:-}
  done
  local cells="" cell
  for cell in ${XFRAG_NCU-q4_k:GEMV_TOKENS=8;I8=1;XPRE=2;WARPS=8;KSPLIT=4}; do cells="$cells ${cell%%:*}:14336:${cell#*:}"; done
  gemv_ncu $cells
}

phase_guard() {
  # the int8 epilogues without their branch past T (I8_GUARD=0, gemv_i8_common.cuh: T = 4 and 6 ran about 20 % slower
  # than 3, 5, 7 with 26 branches in the kernel against 10) against the default, at each format's table pick, T = 4
  # and 6 in both orders and 8 (unchanged code: the control), the oracle test first; one process per run
  GPUBENCH_TEST_ONLY="XPRE=1 and 2 int8 kernels match" run lua_test_gemv_guard timeout 300 \
    $G tests/lua/test_gemv_cuda_i8.lua
  tail -1 "$LOGS/lua_test_gemv_guard.log"
  XFRAG_TEST=0 XFRAG_NCU="" XFRAG_FORMATS=${GUARD_FORMATS:-q4_k q5_k q8_0} XFRAG_TAG=_guard \
    XFRAG_RUNS=${GUARD_RUNS:-forward:200:4 reverse:200:4 forward:200:6 reverse:200:6 forward:200:8} \
    XFRAG_GRID="GEMV_TOKENS=TK;I8=1;XPRE=2;WARPS=7;KSPLIT=4;I8_GUARD=0,1|GEMV_TOKENS=TK;I8=1;XPRE=2;WARPS=2,4;KSPLIT=4;I8_GUARD=0,1|GEMV_TOKENS=TK;I8=0" \
    phase_xfrag
}

phase_staged() {
  # the weights staged through a ring of cp.async stages per warp (STAGED=2..4, XPRE=2, q4_k, q5_k, q8_0, q4_0:
  # docs/kernels/cuda-gemv.md, "Weights staged in shared memory") beside the table's XPRE=2 picks, T = 8 both
  # orders and 4; one process per run (the oracle test, with staged variants, is the guard phase's)
  local base="GEMV_TOKENS=TK;I8=1;XPRE=2"
  local q4="$base;WARPS=7;KSPLIT=4|$base;WARPS=2;KSPLIT=4;STAGED=2|$base;WARPS=2;KSPLIT=2;STAGED=2,3,4"
  q4="$q4|$base;WARPS=1;KSPLIT=4;STAGED=3,4|$base;WARPS=1;KSPLIT=2;STAGED=4"
  local q5="$base;WARPS=2,7;KSPLIT=4|$base;WARPS=2;KSPLIT=2;STAGED=2,3|$base;WARPS=1;KSPLIT=4;STAGED=2,3"
  q5="$q5|$base;WARPS=1;KSPLIT=2;STAGED=2,4"
  local q8="$base;WARPS=4;KSPLIT=2|$base;WARPS=2;KSPLIT=2;STAGED=2|$base;WARPS=1;KSPLIT=4;STAGED=2"
  q8="$q8|$base;WARPS=1;KSPLIT=2;STAGED=3,4|$base;WARPS=4;KSPLIT=1;STAGED=2"
  local q40="GEMV_TOKENS=TK;TC=1|$base;WARPS=2;KSPLIT=4|$base;WARPS=2;KSPLIT=4;STAGED=2|$base;WARPS=2;KSPLIT=2;STAGED=2,3,4"
  q40="$q40|$base;WARPS=1;KSPLIT=4;STAGED=3,4"
  local runs=${STAGED_RUNS:-forward:200:8 reverse:200:8 forward:200:4}
  gemv_runs staged "" q4_k "$runs" "$q4" 120
  gemv_runs staged "" q5_k "$runs" "$q5" 120
  gemv_runs staged "" q8_0 "$runs" "$q8" 120
  gemv_runs staged "" q4_0 "$runs" "$q40" 120
}

phase_next18() { # the next session's first call: the CUDA T-row tables with this session's rules (they never ran),
  # then the Vulkan cooperative-matrix kernels' oracle test and their A/B at T = 8 for the three formats most used
  TOKENS_TESTS=0 TOKENS_SHAPES=${NEXT18_SHAPES:-14336:1 14336:2 14336:4 14336:8} bash "$0" tokens cuda
  VKCOOP_FORMATS=${VKCOOP_FORMATS:-q4_k q8_0 q6_k bf16} VKCOOP_RUNS=${VKCOOP_RUNS:-forward:200:8 reverse:200:8} VKCOOP_CUDA=0 \
    phase_vkcoop
  # the PM-sampling timeline of q4_k T = 8 as values (next17 printed only the section's summary): where a quarter of
  # the SMs' cycles idle, at the start or the tail
  local d="GEMV_TOKENS=8;I8=1;XPRE=2;WARPS=7;KSPLIT=4"
  run ncu_pm_export timeout 120 "$NCU" --cache-control none --clock-control none --section PmSampling \
    --profile-from-start off --export "$LOGS/pm_q4k_T8" -f env M=14336 K=5120 $G --backend cuda \
    experiments/gemv_variants.lua --rotate --rounds 1 --kernels q4_k --grid "$d" --profile "q4_k ${d//;/ }"
  "$NCU" --import "$LOGS/pm_q4k_T8.ncu-rep" --page raw --print-metric-instances values --csv > "$LOGS/pm_q4k_T8.csv" 2>&1
  head -c 3000 "$LOGS/pm_q4k_T8.csv"
}

phase_picks() {
  # T = 2..7 picks after the guard and staged A/Bs (docs/kernels/cuda-gemv.md, "Weights staged in shared memory"):
  # each int8 format's rule at T beside the same kernel without the guard past T (I8_GUARD=0) and the staged
  # geometries that won at T = 8, all unguarded, and the integer dot; both orders at each T (PICKS_T), then T = 8's
  # staged picks against the rules at a second iteration count (600); one process per run
  local b="GEMV_TOKENS=TK;I8=1;XPRE=2" g0="I8_GUARD=0" t o runs=""
  for t in ${PICKS_T:-2 3 4 5 6 7}; do for o in forward reverse; do runs="$runs $o:200:$t"; done; done
  local q4="$b;WARPS=7;KSPLIT=4;I8_GUARD=0,1|$b;WARPS=2;KSPLIT=2;STAGED=2,4;$g0|GEMV_TOKENS=TK;I8=0"
  local q5="$b;WARPS=7,2;KSPLIT=4;I8_GUARD=0,1|GEMV_TOKENS=TK;I8=1;XPRE=1;WARPS=4;KSPLIT=2;PREFETCH=1;I8_GUARD=0,1"
  q5="$q5|$b;WARPS=2;KSPLIT=2;STAGED=2;$g0|$b;WARPS=1;KSPLIT=2;STAGED=4;$g0|GEMV_TOKENS=TK;I8=0"
  local q8="GEMV_TOKENS=TK;TC=1|$b;WARPS=2;KSPLIT=4;$g0|$b;WARPS=2;KSPLIT=2;STAGED=2;$g0|$b;WARPS=1;KSPLIT=2;STAGED=3;$g0"
  q8="$q8|$b;WARPS=1;KSPLIT=4;STAGED=2;$g0|GEMV_TOKENS=TK;I8=0"
  local q40="GEMV_TOKENS=TK;TC=1|$b;WARPS=2;KSPLIT=2;STAGED=2,4;$g0|$b;WARPS=1;KSPLIT=4;STAGED=4;$g0|GEMV_TOKENS=TK;I8=0"
  local q6="$b;WARPS=4;KSPLIT=2;PREFETCH=1;I8_GUARD=0,1|$b;WARPS=8;KSPLIT=4;I8_GUARD=0,1|GEMV_TOKENS=TK;I8=0"
  gemv_runs picks "" q4_k "$runs" "$q4" 120
  gemv_runs picks "" q5_k "$runs" "$q5" 120
  gemv_runs picks "" q8_0 "$runs" "$q8" 120
  gemv_runs picks "" q4_0 "$runs" "$q40" 120
  gemv_runs picks "" q6_k "$runs" "$q6" 120
  [[ ${PICKS_T8:-1} == 1 ]] || return 0
  gemv_runs picks "" q5_k "forward:600:8" "$b;WARPS=2;KSPLIT=4|$b;WARPS=2;KSPLIT=2;STAGED=2" 120
  gemv_runs picks "" q8_0 "forward:600:8" "$b;WARPS=4;KSPLIT=2|$b;WARPS=1;KSPLIT=2;STAGED=3" 120
  gemv_runs picks "" q4_0 "forward:600:8" "GEMV_TOKENS=TK;TC=1|$b;WARPS=2;KSPLIT=2;STAGED=4" 120
}

phase_next17() { # issue 17's queue after `guard` (a call of its own: the oracle test, with the guard and staged
  # variants, then the unguarded epilogue's A/B): the staged weights' A/B, the T-row tables on both backends,
  # then ncu's sampled timeline of one q4_k T = 8 call (SM activity and DRAM over the call: whether the idle
  # third of the SMs' cycles is at the start or the tail; docs/kernels/cuda-gemv.md, "x in fragment order")
  phase_staged
  TOKENS_TESTS=0 TOKENS_SHAPES=${TOKENS_SHAPES:-14336:1 14336:2 14336:4 14336:8} bash "$0" tokens
  local d="GEMV_TOKENS=8;I8=1;XPRE=2;WARPS=7;KSPLIT=4"
  run ncu_pm_q4k_T8 timeout 120 "$NCU" --cache-control none --clock-control none --section SpeedOfLight \
    --section PmSampling --section LaunchStats --profile-from-start off env M=14336 K=5120 $G --backend cuda \
    experiments/gemv_variants.lua --rotate --rounds 1 --kernels q4_k --grid "$d" --profile "q4_k ${d//;/ }"
  grep -vE '^\s*$' "$LOGS/ncu_pm_q4k_T8.log" | tail -60
}

phase_xpre_geo() {
  # XPRE=1 geometries past the first A/B's (docs/kernels/cuda-gemv.md, "x quantized once per call": q4_k's pick at
  # T = 8, 8 warps x 4 slices, is one 1024-thread block per SM at 64 registers, 112 blocks for 132 SMs): 8 slices,
  # 16 warps, beside the table's picks, T = XPRE_GEO_T (8), both orders, XPRE_GEO_FORMATS (q4_k q5_k q6_k q8_0)
  local tk=${XPRE_GEO_T:-8}
  for f in ${XPRE_GEO_FORMATS:-q4_k q5_k q6_k q8_0}; do
    for o in forward reverse; do
      # W4 S2 and W8 S4: the table's picks at T = 8; then the new geometries
      local g="GEMV_TOKENS=$tk;I8=1;XPRE=1;WARPS=4;KSPLIT=2|GEMV_TOKENS=$tk;I8=1;XPRE=1;WARPS=1,2,4;KSPLIT=8"
      g="$g|GEMV_TOKENS=$tk;I8=1;XPRE=1;WARPS=16;KSPLIT=1,2"
      g="$g|GEMV_TOKENS=$tk;I8=1;XPRE=1;WARPS=2,4,8;KSPLIT=4"
      local n="xpregeo_${f}_${o}_T$tk"
      run "$n" timeout ${XPRE_LIMIT:-120} env M=14336 K=5120 ITERS=200 $G --backend cuda experiments/gemv_variants.lua \
        --rotate --rounds 1 --kernels $f --order $o --grid "$g" --json "$LOGS/$n.jsonl"
      grep -E "^$f" "$LOGS/$n.log" | grep -v invalid
    done
  done
}

phase_vkxpre() {
  # Vulkan q4_k, q5_k, q6_k (its GEMV_IDOT=2), q8_0 and q4_0 with x quantized once per call (GEMV_XPRE=1: a first dispatch, docs/kernels/vulkan-gemv.md,
  # "x quantized once per call") against x quantized per workgroup (GEMV_XPRE=0, sliced past the shared limit): the
  # Vulkan GEMV test first (VKXPRE_TEST=0 skips), then ORDER:ITERS:T runs at 14336 x 5120 rotated, one process each
  [[ ${VKXPRE_TEST:-1} == 1 ]] && GPUBENCH_TEST_ONLY="XPRE" run lua_test_vk_xpre timeout 300 $G tests/lua/test_gemv_vulkan_xpre.lua
  [[ ${VKXPRE_TEST:-1} == 1 ]] && tail -1 "$LOGS/lua_test_vk_xpre.log"
  for f in ${VKXPRE_FORMATS:-q4_k q5_k q6_k q8_0 q4_0}; do
    local md=1; [[ $f == q6_k ]] && md=2 # q6_k's table mode (both of its modes are layout 1)
    for oit in ${VKXPRE_RUNS:-forward:200:8 reverse:200:8 forward:200:4 forward:200:1}; do
      IFS=: read -r o it tk <<< "$oit"
      # the table's kernel at T (for_device: q8_0/q4_0 at T = 1 in layout 2), then layout 1 without and with XPRE
      g="GEMV_TOKENS=$tk;GEMV_IDOT=$md;GEMV_XPRE=0,1|GEMV_TOKENS=$tk;GEMV_IDOT=$md;GEMV_XPRE=1;GEMV_T=8,16,32;GEMV_NR=2,4,8"
      [[ ($f == q8_0 || $f == q4_0) && $tk == 1 ]] && g="$g|GEMV_TOKENS=1;GEMV_IDOT=2"
      n="vkxpre_${f}_${o}_${it}_T$tk"
      run "$n" timeout ${VKXPRE_LIMIT:-150} env M=14336 K=5120 ITERS=$it $G --backend vulkan experiments/gemv_variants.lua \
        --rotate --rounds 1 --kernels $f --order $o --grid "$g" --json "$LOGS/$n.jsonl"
      grep -E "^$f" "$LOGS/$n.log" | grep -v invalid
    done
  done
}

phase_vkcoop() {
  # the Vulkan q8_0/q4_0/q4_k/q5_k/q6_k GEMV on int8 cooperative matrices and f16/bf16 on fp16 ones (GEMV_COOP=1, docs/kernels/vulkan-gemv.md, "Tensor
  # cores through int8 cooperative matrices"): its test (the oracle at every T; VKCOOP_TEST=0 skips), then ORDER:ITERS:T
  # runs at 14336 x 5120 rotated, one process each, beside the table's integer kernels (x once per call, XPRE_RULES'
  # geometry; layout 2 at T = 1 for q8_0/q4_0); then CUDA's T-row rules at T = 8 and 4 for the ratio (VKCOOP_CUDA=0
  # skips). Seven formats do not fit one call: VKCOOP_FORMATS splits them.
  if [[ ${VKCOOP_TEST:-1} == 1 ]]; then
    run lua_test_vk_coop timeout ${VKCOOP_TEST_LIMIT:-300} $G tests/lua/test_gemv_vulkan_coop.lua
    tail -3 "$LOGS/lua_test_vk_coop.log"
  fi
  local f o it tk g n oit
  for f in ${VKCOOP_FORMATS:-q8_0 q4_0 q4_k q5_k q6_k f16 bf16}; do
    for oit in ${VKCOOP_RUNS:-forward:200:8 reverse:200:8 forward:200:4 forward:200:1}; do
      IFS=: read -r o it tk <<< "$oit"
      # the table's integer kernel with x once per call (q4_k's XPRE geometry {16, 8}), then the coop geometries
      local nr=4 t=16 md=1; [[ $f == q4_k ]] && nr=8; [[ $f == q5_k ]] && t=8; [[ $f == q6_k ]] && md=2 t=8
      g="GEMV_TOKENS=$tk;GEMV_IDOT=$md;GEMV_XPRE=1;GEMV_T=$t;GEMV_NR=$nr"
      # the dense formats' table kernel at T (DENSE_TOKENS: 16 lanes, 8 rows from T = 4; 8 rows at 2-3)
      [[ $f == f16 || $f == bf16 ]] && g="GEMV_TOKENS=$tk;GEMV_T=16;GEMV_NR=8|GEMV_TOKENS=$tk;GEMV_T=32;GEMV_NR=8"
      g="$g|GEMV_TOKENS=$tk;GEMV_COOP=1;COOP_WR=2,4,8;COOP_KS=1,2,4"
      [[ $f != q4_k && $f != q5_k && $f != q6_k ]] && g="$g|GEMV_TOKENS=$tk;GEMV_COOP=1;COOP_WR=4;COOP_KS=2;COOP_U=1,2,8"
      [[ $tk == 1 && ($f == q8_0 || $f == q4_0) ]] && g="$g|GEMV_TOKENS=1;GEMV_IDOT=2"
      # f16's A straight from W (no stage): whether the matrix loads from shared memory are the cost
      [[ $f == f16 ]] && g="$g|GEMV_TOKENS=$tk;GEMV_COOP=1;COOP_DIRECT=1;COOP_WR=2,4,8;COOP_KS=1,2,4"
      # A's components written from registers (no stage, no matrix load of A)
      [[ $f == f16 || $f == bf16 ]] && g="$g|GEMV_TOKENS=$tk;GEMV_COOP=1;COOP_REG=1;COOP_WR=2,4,8;COOP_KS=1,2,4;COOP_U=2,4"
      n="vkcoop_${f}_${o}_${it}_T$tk"
      run "$n" timeout ${VKCOOP_LIMIT:-150} env M=14336 K=5120 ITERS=$it $G --backend vulkan experiments/gemv_variants.lua \
        --rotate --rounds 1 --kernels $f --order $o --grid "$g" --json "$LOGS/$n.jsonl"
      grep -E "^$f" "$LOGS/$n.log" | grep -v invalid
    done
    # CUDA's rules at T = 4 and 8 (gemv_cuda.lua, TOKEN_RULES)
    g="GEMV_TOKENS=TK;I8=1;XPRE=2;WARPS=1;KSPLIT=2;STAGED=3;I8_GUARD=0"
    [[ $f == q4_0 ]] && g="GEMV_TOKENS=TK;I8=1;XPRE=2;WARPS=2;KSPLIT=2;STAGED=4;I8_GUARD=0"
    [[ $f == q4_k ]] && g="GEMV_TOKENS=TK;I8=1;XPRE=2;WARPS=7;KSPLIT=4;I8_GUARD=0"
    [[ $f == q5_k ]] && g="GEMV_TOKENS=TK;I8=1;XPRE=2;WARPS=2;KSPLIT=2;STAGED=2;I8_GUARD=0"
    [[ $f == q6_k ]] && g="GEMV_TOKENS=TK;I8=1;XPRE=2;WARPS=4;KSPLIT=2;PREFETCH=1|GEMV_TOKENS=TK;I8=0"
    [[ $f == f16 || $f == bf16 ]] && g="GEMV_TOKENS=TK;MMA=1"
    [[ ${VKCOOP_CUDA:-1} == 1 ]] && gemv_runs vkcoop_cuda "" $f "forward:200:8 forward:200:4" "$g" 120
  done
}

phase_vkswiglu_out() {
  # the Vulkan SwiGLU kernels with 4 outputs a workgroup (SW_OUT=4: each x word loaded once for 8 rows, not 4)
  # against 2, one process per geometry in A B B A order per shape, rotated graph, M = 1, 4, 8 (the Vulkan
  # SwiGLU test first; VKSW_SHAPES)
  GPUBENCH_TEST_ONLY="SW_OUT" run lua_test_vk_swiglu_out timeout 120 $G tests/lua/test_swiglu_vulkan.lua
  tail -1 "$LOGS/lua_test_vk_swiglu_out.log"
  for nk in ${VKSW_SHAPES:-13824,5120 11008,4096 6912,1536}; do
    for geo in SW_OUT=2 SW_OUT=4 SW_OUT=4 SW_OUT=2; do
      n="vksw_${nk%,*}_${geo//[=,]/_}"; [[ -f $LOGS/$n.jsonl ]] && n=${n}_b
      SWGEO_BACKEND=vulkan SWGEO_M=${SWGEO_M:-1,4,8} swgeo "$n" $nk $geo
    done
  done
}

phase_vkreg() {
  # Vulkan matrices filled from registers (kernels/vulkan/coop_frag.glsl): the SwiGLU kernels (SW_COOP=1) against the
  # scalar ones, one process per geometry in A B B A order per shape (VKREG_SHAPES), rotated graph, M = 1, 4, 8, after
  # their GPU oracle test; the f16/bf16 GEMV (COOP_REG=1) at T = 8 beside the table's kernel and the staged one; then
  # the GEMV cooperative-matrix oracle test (every format, every T; VKREG_GEMV_TEST=0 skips)
  GPUBENCH_TEST_ONLY="SW_COOP=1 (and SW_WB=1): chain" run lua_test_vk_swiglu_coop timeout 120 $G tests/lua/test_swiglu_vulkan.lua
  grep -E "^(ok|FAIL|SKIP)" "$LOGS/lua_test_vk_swiglu_coop.log" | grep -v GPUBENCH_TEST_ONLY | cut -c1-300
  for nk in ${VKREG_SHAPES:-13824,5120 6912,1536}; do
    for geo in ${VKREG_GEOS:-SW_WG=64 SW_COOP=1 SW_COOP=1 SW_WG=64}; do
      n="vkreg_${nk%,*}_${geo//[=,]/_}"; [[ -f $LOGS/$n.jsonl ]] && n=${n}_b
      SWGEO_BACKEND=vulkan SWGEO_M=${VKREG_M:-1,4,8} swgeo "$n" $nk $geo
    done
  done
  for f in ${VKREG_GEMV_FORMATS-f16 bf16}; do # VKREG_GEMV_FORMATS="": none
    n="vkreg_gemv_${f}_T8"
    run "$n" timeout 120 env M=14336 K=5120 ITERS=200 $G --backend vulkan experiments/gemv_variants.lua --rotate --rounds 1 \
      --kernels $f --grid "GEMV_TOKENS=8;GEMV_T=16;GEMV_NR=8|GEMV_TOKENS=8;GEMV_COOP=1;COOP_REG=1;COOP_WR=2,4;COOP_KS=1,2,4;COOP_U=2,4|GEMV_TOKENS=8;GEMV_COOP=1" \
      --json "$LOGS/$n.jsonl"
    grep -E "^$f|rror" "$LOGS/$n.log"
  done
  if [[ ${VKREG_GEMV_TEST:-1} == 1 ]]; then
    GPUBENCH_TEST_ONLY="GEMV_COOP=1: the five" run lua_test_vk_coop timeout 150 $G tests/lua/test_gemv_vulkan_coop.lua
    grep -E "^(ok|FAIL|SKIP)" "$LOGS/lua_test_vk_coop.log" | grep -v GPUBENCH_TEST_ONLY | cut -c1-300
  fi
}

phase_wide() { # COOP_REG=2 (kernels/vulkan/gemv_dense_wide.comp): its GPU oracle test, then f16/bf16 at T = WIDE_T (8)
  # beside the table's scalar kernel, 14336 x 5120 rotated, the grid WIDE_GRID (@T: the T), one process a format
  # (WIDE_VALIDATE=1: each then rerun reversed at 5x the iterations, cells that move > 3 % flagged)
  if [[ ${WIDE_TEST:-1} == 1 ]]; then
    GPUBENCH_TEST_ONLY="COOP_REG=2 and 3: f16" run lua_test_vk_wide timeout 120 $G tests/lua/test_gemv_vulkan_coop.lua
    grep -E "^(ok|FAIL|SKIP)" "$LOGS/lua_test_vk_wide.log" | grep -v GPUBENCH_TEST_ONLY | cut -c1-300
  fi
  local grid=${WIDE_GRID:-"GEMV_TOKENS=@T;GEMV_T=16;GEMV_NR=8|GEMV_TOKENS=@T;GEMV_COOP=1;COOP_REG=2;COOP_WR=1,2,4;COOP_KS=2,4,8;COOP_U=2;COOP_RT=1,2"}
  for T in ${WIDE_T-8}; do # WIDE_T="": no grid
    for f in ${WIDE_FORMATS:-f16 bf16}; do
      local n="vkwide_${f}_T${T}${WIDE_TAG:-}"
      run "$n" timeout ${WIDE_TIMEOUT:-150} env M=${WIDE_M:-14336} K=5120 ITERS=200 $G --backend vulkan experiments/gemv_variants.lua \
        --rotate --rounds 1 ${WIDE_VALIDATE:+--validate} --kernels $f --grid "${grid//@T/$T}" --json "$LOGS/$n.jsonl"
      grep -E "^$f|rror" "$LOGS/$n.log"
    done
  done
  # the first dispatch's share of a call (tools/gemv_parts.lua), at WIDE_PARTS' geometry, then the
  # GEMV's diagnostic builds (WIDE_DIAGS: without A's component writes, without any product)
  for d in ${WIDE_DIAGS-WIDE_DIAG=1 WIDE_DIAG=2}; do # WIDE_DIAGS="": none
    local n="wide_parts${WIDE_TAG:-}_${d//=/}"
    run "$n" timeout 90 env FMT=f16 DIAG=$d \
      CHANGES="${WIDE_PARTS:-GEMV_TOKENS=8,GEMV_COOP=1,COOP_REG=2,COOP_WR=4,COOP_KS=8,COOP_U=2}" $G --backend vulkan tools/gemv_parts.lua
    cat "$LOGS/$n.log"
  done
}

phase_next20() { # one call for what 2026-12-06 left unmeasured: the GEMV's COOP_REG=3 (W in B) against the scalar kernel and
  # COOP_REG=2 at T = 8 and 4, each grid rerun reversed at 5x the iterations (f16; bf16 at T = 8), the loads-only diagnostics,
  # then the SwiGLU kernels with W in B (SW_WB=1) against the scalar ones, A B B A, LLaMA-2-13B, M = 1, 4, 8; first the
  # fp16 and int8 fragment layouts (tools/coop_layout_probe.lua: the int8 ones never printed yet)
  run coop_layout timeout 60 $G --backend vulkan tools/coop_layout_probe.lua
  grep -A33 "^A 16x32 s8\|^B 32x8 s8" "$LOGS/coop_layout.log" | head -70
  WIDE_T=${NEXT20_T:-"8 4"} WIDE_VALIDATE=1 WIDE_TAG=_n20 WIDE_FORMATS=f16 WIDE_DIAGS="WIDE_DIAG=2 WIDE_DIAG=3" \
    WIDE_GRID="GEMV_TOKENS=@T;GEMV_T=16;GEMV_NR=8|GEMV_TOKENS=@T;GEMV_COOP=1;COOP_REG=2;COOP_WR=4;COOP_KS=8;COOP_U=2|GEMV_TOKENS=@T;GEMV_COOP=1;COOP_REG=3;COOP_WR=2,4;COOP_KS=4,8;COOP_U=2;COOP_RT=2,4" \
    phase_wide
  WIDE_T=8 WIDE_VALIDATE=1 WIDE_TAG=_n20 WIDE_FORMATS=bf16 WIDE_DIAGS= WIDE_TEST=0 \
    WIDE_GRID="GEMV_TOKENS=@T;GEMV_T=16;GEMV_NR=8|GEMV_TOKENS=@T;GEMV_COOP=1;COOP_REG=3;COOP_WR=4;COOP_KS=4,8;COOP_U=2;COOP_RT=2,4" \
    phase_wide
  VKREG_SHAPES=13824,5120 VKREG_GEOS="SW_WG=64 SW_COOP=1,SW_WB=1 SW_COOP=1,SW_WB=1 SW_WG=64" VKREG_GEMV_FORMATS= \
    VKREG_GEMV_TEST=0 phase_vkreg
}

kloop_ab() { # kloop_ab FULL: GEMV_KHALF's registers (k:stats, q4_k T = 4) and A/B against the XPRE rule's kernels,
  # validated, both orders: q4_k T = 4 and 8, q5_k T = 4; GEMV_KPF against the table's kernel at T = 1 (q4_k, q5_k,
  # q8_0, q4_0);
  # FULL=1 also q4_k T = 8 at 16 lanes, q4_k T = 2 and GEMV_KPF at 131072 rows
  run kstats_khalf timeout 60 $G tools/kernel_stats.lua --backend vulkan \
    file:kernels/vulkan/gemv_q4_k.comp:main:256:GEMV_IDOT=1,GEMV_XPRE=1,GEMV_T=8,GEMV_NR=4,GEMV_TOKENS=4,GEMV_XB=8 \
    file:kernels/vulkan/gemv_q4_k.comp:main:256:GEMV_IDOT=1,GEMV_XPRE=1,GEMV_KHALF=1,GEMV_T=16,GEMV_NR=4,GEMV_TOKENS=4,GEMV_XB=8
  grep -E "^file|Register" "$LOGS/kstats_khalf.log" | cut -c1-160
  local lanes8=32; [[ $1 == 1 ]] && lanes8=16,32
  variants vkkh_q4k_T4 q4_k 14336 5120 "GEMV_TOKENS=4;GEMV_IDOT=1;GEMV_XPRE=1;GEMV_KHALF=0,1;GEMV_T=8,16;GEMV_NR=4"
  variants vkkh_q5k_T4 q5_k 14336 5120 "GEMV_TOKENS=4;GEMV_IDOT=1;GEMV_XPRE=1;GEMV_KHALF=0,1;GEMV_T=8,16;GEMV_NR=4"
  variants vkkh_q4k_T8 q4_k 14336 5120 \
    "GEMV_TOKENS=8;GEMV_IDOT=1;GEMV_XPRE=1;GEMV_T=16;GEMV_NR=8|GEMV_TOKENS=8;GEMV_IDOT=1;GEMV_XPRE=1;GEMV_KHALF=1;GEMV_T=$lanes8;GEMV_NR=4,8"
  # the first chunk's weights ahead of x's quantization (GEMV_KPF) at one token, the table's geometry
  variants vkkpf_q4k_T1 q4_k 14336 5120 "GEMV_TOKENS=1;GEMV_IDOT=1;GEMV_KPF=0,1;GEMV_T=8;GEMV_NR=2"
  variants vkkpf_q5k_T1 q5_k 14336 5120 "GEMV_TOKENS=1;GEMV_IDOT=1;GEMV_KPF=0,1;GEMV_T=8;GEMV_NR=2"
  variants vkkpf_q80_T1 q8_0 14336 5120 "GEMV_TOKENS=1;GEMV_IDOT=2;GEMV_KPF=0,1;GEMV_T=32;GEMV_NR=8"
  variants vkkpf_q40_T1 q4_0 14336 5120 "GEMV_TOKENS=1;GEMV_IDOT=2;GEMV_KPF=0,1;GEMV_T=32;GEMV_NR=8"
  variants vkkpf_q6k_T1 q6_k 14336 5120 "GEMV_TOKENS=1;GEMV_IDOT=2;GEMV_KPF=0,1;GEMV_T=16;GEMV_NR=4"
  variants vkkpf_q6k_T2 q6_k 14336 5120 "GEMV_TOKENS=2;GEMV_IDOT=2;GEMV_KPF=0,1;GEMV_T=8;GEMV_NR=4"
  [[ $1 == 1 ]] || return 0
  variants vkkh_q4k_T2 q4_k 14336 5120 "GEMV_TOKENS=2;GEMV_IDOT=1;GEMV_XPRE=1;GEMV_KHALF=0,1;GEMV_T=8,16;GEMV_NR=4"
  variants vkkpf_q4k_T1_tall q4_k 131072 5120 "GEMV_TOKENS=1;GEMV_IDOT=1;GEMV_KPF=0,1;GEMV_T=8;GEMV_NR=8"
}

phase_next53() { # issue 14's short points at T = 1024 (vendor/ours 0.30-0.53 on 2026-12-06's H100): the wgmma route's tile
  # width, slices of K and fp16 weights around the grid rule's pick, against the mma route, ABBA, each variant
  # FP64-checked first (SM53_PTS="q:N:K ..." overrides the points)
  local p q n k
  for p in ${SM53_PTS:-w8:4608:4608 w8:2048:4096 w8:5120:17408 q5:1152:1152 q6:1152:1536 q4:4304:1152 q5:6144:5120}; do
    IFS=: read -r q n k <<< "$p"
    run "small53_${q}_${n}_$k" timeout 150 $G --backend cuda experiments/linear_variants.lua --route wgmma --versus mma \
      --grid "LN_BN=128,256;LN_KSPLIT=1,2,4;LN_HALF=0,1" --qtype $q --n $n --k $k --t 1024 \
      --json "$LOGS/small53_${q}_${n}_$k.jsonl"
    grep -E '^ *[0-9]+ |rror|refused' "$LOGS/small53_${q}_${n}_$k.log" | cut -c1-150
  done
}

quant_tables() { # quant_tables T...: the quantized GEMV tables at 14336 x 5120 rotated, Vulkan then CUDA per T (one call:
  # Vulkan against CUDA), the rows of each
  local b tk
  for tk in "$@"; do for b in vulkan cuda; do
    run "gemv_tok_${b}_T$tk" timeout 40 env M=14336 K=5120 $G --backend $b experiments/gemv_table.lua --rotate \
      --tokens $tk --rounds 1 --kernels q8_0,q4_0,q4_k,q5_k,q6_k --json "$LOGS/gemv_tok_${b}_T$tk.jsonl"
    grep -E "^q[0-9]|rror" "$LOGS/gemv_tok_${b}_T$tk.log" | cut -c1-110
  done; done
}

phase_next52() { # next51 cut to a short budget: kloop_ab's short form, the quantized tables at T = 4, 2, 1 on both
  # backends, then the XPRE test on the NVIDIA driver
  kloop_ab 0
  quant_tables 4 2 1
  run vk_xpre_test timeout 60 $G tests/lua/test_gemv_vulkan_xpre.lua
  grep -E "^FAIL|passed" "$LOGS/vk_xpre_test.log"
}

phase_next51() { # kloop_ab whole, the quantized tables at T = 1, 2, 4, 8 on both backends, then the loop switches'
  # and XPRE's tests on the NVIDIA driver (next50: every format's tables at T = 1, 2, 3, 4, 6, 8)
  kloop_ab 1
  quant_tables 1 2 4 8
  local f
  for f in kloop xpre; do
    run "vk_${f}_test" timeout 90 $G tests/lua/test_gemv_vulkan_$f.lua
    grep -E "^FAIL|passed" "$LOGS/vk_${f}_test.log"
  done
}

phase_next50() { # the GEMV tables with the XPRE ranges and q6_k's {16, 4} at T = 1: 14336 x 5120 rotated, T = 1, 2, 3,
  # 4, 6, 8, both backends in one call (Vulkan against CUDA), then the XPRE and k-quant GEMV tests on the NVIDIA driver
  local b tk
  for tk in 1 2 3 4 6 8; do for b in vulkan cuda; do
    run "gemv_tok_${b}_T$tk" timeout 60 env M=14336 K=5120 $G --backend $b experiments/gemv_table.lua --rotate \
      --tokens $tk --rounds 1 --json "$LOGS/gemv_tok_${b}_T$tk.jsonl"
    grep -E "^(q[0-9]|f[13]|bf)|rror" "$LOGS/gemv_tok_${b}_T$tk.log" | cut -c1-110
  done; done
  run vk_xpre_test timeout 90 $G tests/lua/test_gemv_vulkan_xpre.lua
  grep -E "^FAIL|passed" "$LOGS/vk_xpre_test.log"
  run vk_kquant_test timeout 90 $G tests/lua/test_gemv_vulkan_kquant.lua
  grep -E "^FAIL|passed" "$LOGS/vk_kquant_test.log"
}

phase_next49() { # XPRE at T = 1 (never timed: x per workgroup there too), the rule at the T its A/B did not run
  # (T = 3; q5_k and q4_0 at T = 2), the quantized GEMV tables at T = 2 and 4, 14336 x 5120 rotated, both backends
  # (the rule's picks against CUDA, one call), then T = 6
  local one f lt md
  for one in q4_k:8:1 q5_k:8:1 q6_k:16:2; do IFS=: read -r f lt md <<< "$one"
    variants "vkxp_${f}_T1" $f 14336 5120 "GEMV_TOKENS=1;GEMV_IDOT=$md;GEMV_XPRE=0,1;GEMV_T=$lt;GEMV_NR=2,4"
  done
  for f in q8_0 q4_0; do
    variants "vkxp_${f}_T1" $f 14336 5120 \
      "GEMV_TOKENS=1;GEMV_IDOT=2;GEMV_T=32;GEMV_NR=8|GEMV_TOKENS=1;GEMV_IDOT=1;GEMV_XPRE=1;GEMV_T=32,16;GEMV_NR=8,4"
  done
  variants vkxp_q4k_T3 q4_k 14336 5120 "GEMV_TOKENS=3;GEMV_IDOT=1;GEMV_XPRE=0,1;GEMV_T=8;GEMV_NR=4"
  variants vkxp_q80_T3 q8_0 14336 5120 "GEMV_TOKENS=3;GEMV_IDOT=1;GEMV_XPRE=0,1;GEMV_T=16;GEMV_NR=4,8"
  variants vkxp_q5k_T2 q5_k 14336 5120 "GEMV_TOKENS=2;GEMV_IDOT=1;GEMV_XPRE=0,1;GEMV_T=8;GEMV_NR=4"
  variants vkxp_q5k_T3 q5_k 14336 5120 "GEMV_TOKENS=3;GEMV_IDOT=1;GEMV_XPRE=0,1;GEMV_T=8;GEMV_NR=4"
  variants vkxp_q40_T2 q4_0 14336 5120 "GEMV_TOKENS=2;GEMV_IDOT=1;GEMV_XPRE=0,1;GEMV_T=16;GEMV_NR=4,8"
  variants vkxp_q40_T3 q4_0 14336 5120 "GEMV_TOKENS=3;GEMV_IDOT=1;GEMV_XPRE=0,1;GEMV_T=16;GEMV_NR=4,8"
  variants vkxp_q6k_T3 q6_k 14336 5120 "GEMV_TOKENS=3;GEMV_IDOT=2;GEMV_XPRE=0,1;GEMV_T=16;GEMV_NR=8"
  local b tk
  for tk in 2 4; do for b in vulkan cuda; do
    run "gemv_tok_${b}_T$tk" timeout 120 env M=14336 K=5120 $G --backend $b experiments/gemv_table.lua --rotate \
      --tokens $tk --rounds 1 --kernels q8_0,q4_0,q4_k,q5_k,q6_k --json "$LOGS/gemv_tok_${b}_T$tk.jsonl"
    grep -E "^(q[0-9]|\* q)|ceiling|rror" "$LOGS/gemv_tok_${b}_T$tk.log" | cut -c1-160
  done; done
  variants vkxp_q4k_T6 q4_k 14336 5120 "GEMV_TOKENS=6;GEMV_IDOT=1;GEMV_XPRE=0,1;GEMV_T=8,16;GEMV_NR=4,8"
  variants vkxp_q80_T6 q8_0 14336 5120 "GEMV_TOKENS=6;GEMV_IDOT=1;GEMV_XPRE=0,1;GEMV_T=16;GEMV_NR=4,8"
}

phase_next48() { # x quantized once per call (GEMV_XPRE=1) against per workgroup at T = 4 and 2, every integer format,
  # 14336 x 5120 rotated, validated, both orders: GEMV_WG 64 ran 3.9x slower than 256 at q4_k T = 4 (next47), so each
  # workgroup's quantization of x is a large share of the call; XPRE was timed at T = 8 only
  variants vkxp_q4k_T4 q4_k 14336 5120 "GEMV_TOKENS=4;GEMV_IDOT=1;GEMV_XPRE=0,1;GEMV_T=8,16;GEMV_NR=4,8"
  variants vkxp_q80_T4 q8_0 14336 5120 "GEMV_TOKENS=4;GEMV_IDOT=1;GEMV_XPRE=0,1;GEMV_T=16;GEMV_NR=4,8"
  variants vkxp_q5k_T4 q5_k 14336 5120 "GEMV_TOKENS=4;GEMV_IDOT=1;GEMV_XPRE=0,1;GEMV_T=8,16;GEMV_NR=4,8"
  variants vkxp_q40_T4 q4_0 14336 5120 "GEMV_TOKENS=4;GEMV_IDOT=1;GEMV_XPRE=0,1;GEMV_T=16;GEMV_NR=4,8"
  variants vkxp_q6k_T4 q6_k 14336 5120 "GEMV_TOKENS=4;GEMV_IDOT=2;GEMV_XPRE=0,1;GEMV_T=8,16;GEMV_NR=4,8"
  variants vkxp_q4k_T2 q4_k 14336 5120 "GEMV_TOKENS=2;GEMV_IDOT=1;GEMV_XPRE=0,1;GEMV_T=8,16;GEMV_NR=4"
  variants vkxp_q80_T2 q8_0 14336 5120 "GEMV_TOKENS=2;GEMV_IDOT=1;GEMV_XPRE=0,1;GEMV_T=16;GEMV_NR=4,8"
  variants vkxp_q6k_T2 q6_k 14336 5120 "GEMV_TOKENS=2;GEMV_IDOT=2;GEMV_XPRE=0,1;GEMV_T=8,16;GEMV_NR=4"
}

phase_next55() { # GEMV_KHALF where its rule has no A/B yet (q5_k T = 2, 3; q4_k T = 3, 6), then the wgmma slices
  # at T = 256 on two short grids (the one-wave rule holds from 256; next53 timed 1024 only)
  variants vkkh_q5k_T2 q5_k 14336 5120 "GEMV_TOKENS=2;GEMV_IDOT=1;GEMV_XPRE=1;GEMV_KHALF=0,1;GEMV_T=8,16;GEMV_NR=4"
  variants vkkh_q5k_T3 q5_k 14336 5120 "GEMV_TOKENS=3;GEMV_IDOT=1;GEMV_XPRE=1;GEMV_KHALF=0,1;GEMV_T=8,16;GEMV_NR=4"
  variants vkkh_q4k_T3 q4_k 14336 5120 "GEMV_TOKENS=3;GEMV_IDOT=1;GEMV_XPRE=1;GEMV_KHALF=0,1;GEMV_T=8,16;GEMV_NR=4"
  variants vkkh_q4k_T6 q4_k 14336 5120 \
    "GEMV_TOKENS=6;GEMV_IDOT=1;GEMV_XPRE=1;GEMV_T=16;GEMV_NR=8|GEMV_TOKENS=6;GEMV_IDOT=1;GEMV_XPRE=1;GEMV_KHALF=1;GEMV_T=16,32;GEMV_NR=4"
  local p q n k
  for p in q5:1152:4304 w8:2048:4096; do
    IFS=: read -r q n k <<< "$p"
    run "small55_${q}_${n}_$k" timeout 60 $G --backend cuda experiments/linear_variants.lua --route wgmma --versus mma \
      --grid "LN_BN=128,256;LN_KSPLIT=1,2,4,8" --qtype $q --n $n --k $k --t 256 --json "$LOGS/small55_${q}_${n}_$k.jsonl"
    grep -E '^ *[0-9]+ |rror|refused' "$LOGS/small55_${q}_${n}_$k.log" | cut -c1-150
  done
}

cluster_ab() { # cluster_ab TAG T "q:N:K:KS,..." ...: the slices' sums in a cluster (LN_CLUSTER = 1) against the second
  # launch (0) at the listed slice counts, beside the table's pick and the mma route, ABBA, each FP64-checked first
  local tag=$1 tt=$2 p q n k ks; shift 2
  for p in "$@"; do
    [[ -n $p ]] || continue # the script pads its arguments with empty ones
    IFS=: read -r q n k ks <<< "$p"
    run "${tag}_${q}_${n}_${k}_T$tt" timeout 120 $G --backend cuda experiments/linear_variants.lua --route wgmma --versus mma \
      --grid "LN_KSPLIT=$ks;LN_CLUSTER=0,1" --qtype $q --n $n --k $k --t $tt --json "$LOGS/${tag}_${q}_${n}_${k}_T$tt.jsonl"
    grep -E '^ *[0-9]+ |rror|refused' "$LOGS/${tag}_${q}_${n}_${k}_T$tt.log" | cut -c1-150
  done
}

phase_next56() { # the slices' sums through a cluster's shared memory (LN_CLUSTER = 1; docs/kernels/cuda-linear.md,
  # "Slices in one wave"): its GPU test (FP64, the second launch's bits), then the A/B at issue 14's short T = 1024 points
  GPUBENCH_TEST_ONLY="LN_CLUSTER = 1" run lua_test_linear_cluster timeout 240 $G tests/lua/test_linear_cuda.lua
  grep -E "^(ok|FAIL)" "$LOGS/lua_test_linear_cluster.log" | cut -c1-300
  cluster_ab cl56 1024 q5:1152:1152:2,3,4 w8:2048:4096:2,4 q6:1152:1536:2,3,4 q5:1152:4304:2,3,4,8
}

phase_next57() { # next56's A/B at the larger short points and at T = 256
  cluster_ab cl57 1024 w8:4608:4608:2,4 q5:6144:5120:2,4 w8:5120:17408:2,4,8 q4:4304:1152:2
  cluster_ab cl57 256 q5:1152:1152:2,4 w8:2048:4096:2,4
}

phase_next58() { # next56 and the first of next57 in one call (2026-12-06's starts mostly failed): LN_CLUSTER 0/1 at
  # five short T = 1024 points (each variant FP64-checked before it is timed), then the cluster's GPU test
  cluster_ab cl58 1024 q5:1152:1152:2,3,4 w8:2048:4096:2,4 w8:4608:4608:2,4 q5:1152:4304:2,4,8 q6:1152:1536:2,3
  GPUBENCH_TEST_ONLY="LN_CLUSTER = 1" run lua_test_linear_cluster timeout 200 $G tests/lua/test_linear_cuda.lua
  grep -E "^(ok|FAIL)" "$LOGS/lua_test_linear_cluster.log" | cut -c1-300
}

phase_next59() { # the shortest LN_CLUSTER A/B (a session's last minutes): two short T = 1024 points
  cluster_ab cl59 1024 q5:1152:1152:2,3 w8:2048:4096:2
}

phase_next61() { # LN_CLUSTER in a short call (little device time left): next59's two points, then its GPU test
  phase_next59
  GPUBENCH_TEST_ONLY="LN_CLUSTER = 1" run lua_test_linear_cluster timeout 150 $G tests/lua/test_linear_cuda.lua
  grep -E "^(ok|FAIL)" "$LOGS/lua_test_linear_cluster.log" | cut -c1-300
}

cluster_suite() { # cluster_ab's suite twin: cluster_suite TAG LUA: the CUDA suite with cuBLAS after LUA (the route
  # table's settings, e.g. CLUSTER_SLICES), to $LOGS/suite_cuda_TAG.{log,jsonl}
  run "suite_cuda_$1" timeout 200 $G --backend cuda -e "local r = require('gpubench.linear_cuda'); $2" \
    experiments/linear_suite.lua --suite all --json "$LOGS/suite_cuda_$1.jsonl"
  grep -E "fixed cost:|wall time|rror" "$LOGS/suite_cuda_$1.log" | cut -c1-190
}

phase_next62() { # the CUDA suite with cuBLAS with the rule's slices in clusters (next60's last part, for a second call)
  cluster_suite cluster "r.CLUSTER_SLICES = 8"
  awk '$6 == 1024 {print $1, $2, $4, $5, $7, $15, $(NF-1), $NF}' "$LOGS/suite_cuda_cluster.log" | head -30
}

phase_next63() { # the cluster rules (CLUSTER_SLICES = 4, the table's since 2026-12-07) against the workspace rules
  # (0) in the CUDA suite with cuBLAS, A B A, then the whole Linear CUDA test (every route against FP64)
  local tag cs
  for tag in ${CLUSTER_AB:-cl4a:4 cl0:0 cl4b:4}; do
    cs=${tag#*:}; tag=${tag%%:*}
    cluster_suite "$tag" "r.CLUSTER_SLICES = $cs"
  done
  [[ ${CLUSTER_TEST:-1} == 1 ]] || return 0
  run lua_test_linear_cuda timeout 200 $G tests/lua/test_linear_cuda.lua
  grep -E "^(ok|FAIL)|passed" "$LOGS/lua_test_linear_cuda.log" | cut -c1-200
}

phase_next64() { # next63 short (little device time): the suite with the cluster rules, then with the workspace rules
  CLUSTER_AB="cl4a:4 cl0:0" CLUSTER_TEST=0 phase_next63
}

phase_next65() { # the next session's: next63 (the suite, cluster rules against workspace rules, A B A, and the Linear
  # CUDA test), then clusters below T = 256 (the rule keeps the workspace there, unmeasured) at the suite's T = 128
  # points with slices, and the suite with the cluster rules from T = 65 (CLUSTER_FROM_T) up to 8 slices
  phase_next63
  cluster_ab cl65 128 q5:1152:4304:4,8,16 q4:3456:1152:2,4 w8:5120:17408:4,8 q6:1152:1536:4,8 q5:6144:5120:2,4
  cluster_suite cl_t65 "r.CLUSTER_FROM_T = 65; r.CLUSTER_SLICES = 8"
}

tail_ab() { # tail_ab TAG T "q:N:K:KS,..." ...: the last wave's tiles in KS slices (a second launch, LN_TAIL = 1) against the
  # unsplit route (TAIL = 0) and the table's pick, ABBA, each FP64-checked first
  local tag=$1 tt=$2 p q n k ks; shift 2
  for p in "$@"; do
    [[ -n $p ]] || continue
    IFS=: read -r q n k ks <<< "$p"
    run "${tag}_${q}_${n}_${k}_T$tt" timeout 150 $G --backend cuda experiments/linear_variants.lua --route wgmma \
      --grid "LN_KSPLIT=1;LN_CLUSTER=0;TAIL=0,$ks" --qtype $q --n $n --k $k --t $tt --json "$LOGS/${tag}_${q}_${n}_${k}_T$tt.jsonl"
    grep -E '^ *[0-9]+ |rror|refused' "$LOGS/${tag}_${q}_${n}_${k}_T$tt.log" | cut -c1-150
  done
}

grid_at() { # grid_at TAG T GRID "q:N:K" ...: linear_variants --route wgmma with GRID against the table's pick at each
  # point, ABBA, each variant FP64-checked first, to $LOGS/TAG_q_N_K_TT.{log,jsonl}
  local tag=$1 tt=$2 grid=$3 p q n k; shift 3
  for p in "$@"; do
    IFS=: read -r q n k <<< "$p"
    run "${tag}_${q}_${n}_${k}_T$tt" timeout 100 $G --backend cuda experiments/linear_variants.lua --route wgmma \
      --grid "$grid" --qtype $q --n $n --k $k --t $tt --json "$LOGS/${tag}_${q}_${n}_${k}_T$tt.jsonl"
    grep -E '^ *[0-9]+ |rror|refused' "$LOGS/${tag}_${q}_${n}_${k}_T$tt.log" | cut -c1-150
  done
}

phase_next68() { # the last wave in slices (TAIL, docs/kernels/cuda-linear.md, "The last wave in slices"): its GPU test,
  # the A/B at the T = 1024 points with a partial last wave, the suite with the table (no tail), with TAIL_SLICES = 8,
  # and with the workspace rules (CLUSTER_SLICES = 0), then ncu's full set at w8 4608 x 4608
  GPUBENCH_TEST_ONLY="last wave in slices" run lua_test_linear_tail timeout 200 $G tests/lua/test_linear_cuda.lua
  grep -E "^(ok|FAIL|SKIP)" "$LOGS/lua_test_linear_tail.log" | cut -c1-300
  tail_ab tl68 1024 w8:4608:4608:4,8 w8:5120:4608:2,4 q4:4304:1152:2,4 w8:5120:17408:2,4 q5:6144:5120:2 \
    w8:14336:5120:2 w8:5120:10240:4
  cluster_suite cl4 "r.CLUSTER_SLICES = 4"
  cluster_suite tail8 "r.TAIL_SLICES = 8"
  cluster_suite cl0 "r.CLUSTER_SLICES = 0"
  WGNCU="${WGNCU:-w8:4608:4608}" bash "$0" wgncu
}

xtile_ab() { # xtile_ab TAG T "q:N:K" ...: x by one bulk copy a unit (LN_XTILE = 1; 2 without the block barrier;
  # XTILES) against the per-thread copies, at
  # the table's pick (slices and clusters kept), ABBA, each FP64-checked first
  local tag=$1 tt=$2 p q n k; shift 2
  for p in "$@"; do
    [[ -n $p ]] || continue
    IFS=: read -r q n k <<< "$p"
    run "${tag}_${q}_${n}_${k}_T$tt" timeout 150 $G --backend cuda experiments/linear_variants.lua --route wgmma \
      --grid "LN_XTILE=${XTILES:-0,1,2}" --qtype $q --n $n --k $k --t $tt --json "$LOGS/${tag}_${q}_${n}_${k}_T$tt.jsonl"
    grep -E '^ *[0-9]+ |rror|refused' "$LOGS/${tag}_${q}_${n}_${k}_T$tt.log" | cut -c1-150
  done
}

phase_next69() { # x by bulk copies (LN_XTILE) and the last wave in slices (TAIL) in one call: their GPU tests, the A/Bs,
  # the suite with TAIL_SLICES = 8, then with the table
  GPUBENCH_TEST_ONLY="LN_XTILE = 1" run lua_test_linear_xtile timeout 150 $G tests/lua/test_linear_cuda.lua
  grep -E "^(ok|FAIL|SKIP)" "$LOGS/lua_test_linear_xtile.log" | cut -c1-300
  GPUBENCH_TEST_ONLY="last wave in slices" run lua_test_linear_tail timeout 150 $G tests/lua/test_linear_cuda.lua
  grep -E "^(ok|FAIL|SKIP)" "$LOGS/lua_test_linear_tail.log" | cut -c1-300
  xtile_ab xt69 1024 q4:131072:5120 w8:34816:5120 w8:14336:5120 q5:6144:5120 w8:4608:4608
  xtile_ab xt69 256 q4:131072:5120
  tail_ab tl69 1024 w8:4608:4608:4,8 w8:5120:4608:4 q4:4304:1152:4 w8:5120:17408:4 w8:5120:10240:4
  cluster_suite tail8 "r.TAIL_SLICES = 8"
  cluster_suite cl4 "r.CLUSTER_SLICES = 4"
}

phase_next70() { # the table with x by bulk copies (LN_XTILE = 1) and the last wave in slices (TAIL_SLICES = 8): the CUDA
  # suite with cuBLAS, the same without the tail, then the whole Linear CUDA test (every route against FP64)
  cluster_suite xt_tail "r.TAIL_SLICES = 8"
  cluster_suite xt_notail "r.TAIL_SLICES = 0"
  awk '$6 == 1024 {print $1, $2, $4, $5, $7, $15, $(NF-1), $NF}' "$LOGS/suite_cuda_xt_tail.log" | head -30
  run lua_test_linear_cuda timeout ${TEST_LIMIT:-240} $G tests/lua/test_linear_cuda.lua
  grep -E "^(ok|FAIL)|passed" "$LOGS/lua_test_linear_cuda.log" | cut -c1-200
}

phase_next71() { # next70's first suite alone (little device time): the table with x by bulk copies and the tail
  cluster_suite xt_tail "r.TAIL_SLICES = 8"
  grep -E " 1024 " "$LOGS/suite_cuda_xt_tail.log" | awk '{print $1, $5, $6, $8, $(NF-1), $NF}'
}

phase_next72() { # the next session's: next70 (the suite with the new table against no tail, and the whole Linear CUDA
  # test), then at the short points under one wave (slices in a cluster, bf16 codes) the weights in fp16 with x by bulk
  # copies against the table's, ABBA, LN_XTILE = 2 (its release wait after its products) against 1, then ncu's full
  # set of one call at w8 4608 x 4608 and q4 131072 x 5120
  phase_next70
  grid_at hx72 1024 "LN_HALF=1;LN_XTILE=0,1" q5:1152:1152 q6:1152:1536 q5:1152:4304 q4:3456:1152
  XTILES=1,2 xtile_ab xt72 1024 w8:34816:5120 q4:131072:5120
  WGNCU="${WGNCU:-w8:4608:4608 q4:131072:5120}" bash "$0" wgncu
}

phase_next73() { # (a record: tools/ab_prep.lua and its kernels/cuda/ab_prep_old.cu were one-off working-tree files, not
  # committed; the method: docs/kernels/cuda-linear.md, "The prepass by 16 bytes"; linear_variants' PREP_HOLD since)
  # the prepass by 16 bytes: its A/B against the previous kernel (tools/ab_prep.lua: outputs byte for byte,
  # cold A B B A) at three T = 1024 points, the suite with cuBLAS (the vendor's bound for bf16 weights: every row timed),
  # the whole Linear CUDA test, then ncu's full set of one call at w8 4608 x 4608
  local p q n k
  for p in w8:4608:4608 q5:6144:5120 q4:131072:5120 w8:5120:17408; do
    IFS=: read -r q n k <<< "$p"
    run "abprep_${q}_${n}_${k}" env QTYPE=$q N=$n K=$k T=1024 timeout 60 $G tools/ab_prep.lua
    grep -E "identical|DIFFERENT|cold us|rror" "$LOGS/abprep_${q}_${n}_${k}.log" | cut -c1-160
  done
  cluster_suite t73 ""
  awk '$6 == 1024 {print $1, $2, $4, $5, $7, $(NF-1), $NF}' "$LOGS/suite_cuda_t73.log" | head -30
  run lua_test_linear_cuda timeout ${TEST_LIMIT:-240} $G tests/lua/test_linear_cuda.lua
  grep -E "^(ok|FAIL)|passed" "$LOGS/lua_test_linear_cuda.log" | cut -c1-120 | grep -v "^ok"
  WGNCU="${WGNCU:-w8:4608:4608}" bash "$0" wgncu
}

phase_next75() { # the short grids (slices in a cluster, the bf16 codes) against the weights in fp16 with x by bulk copies
  # after the prepass by 16 bytes (hx72 was before it), ABBA, at T = 1024 and 256
  local tt
  for tt in 1024 256; do
    grid_at hx75 $tt "LN_HALF=1;LN_XTILE=1" q5:1152:4304 q4:3456:1152 q5:1152:1152 q6:1152:1536 q6:1152:4304 q4:1152:4304
  done
}

phase_next76() { # the suite with the fp16 weights on the short grids with 64 units or more (HALF_SLICE_UNITS), and the
  # Linear CUDA test's cases of those geometries (slices in a cluster with the bulk copies; the fp16 weights)
  cluster_suite t76 ""
  awk '$6 == 1024 {print $1, $2, $4, $5, $7, $(NF-1), $NF}' "$LOGS/suite_cuda_t76.log" | head -30
  run lua_test_linear_cuda_xtile env GPUBENCH_TEST_ONLY="x by bulk copies" timeout 200 $G tests/lua/test_linear_cuda.lua
  grep -E "^(ok|FAIL)|passed" "$LOGS/lua_test_linear_cuda_xtile.log" | cut -c1-160
}

phase_next77() { # (a record: its tools/ab_prep.lua and kernels/cuda/ab_prep_old.cu were not committed, as next73's)
  # the prepass with each row of x held in registers (read once): tools/ab_prep.lua against the committed
  # kernel (kernels/cuda/ab_prep_old.cu, outputs byte for byte, cold A B B A), one point past the registers (K = 32768);
  # the GPU tests of the fp16 routes; the suite
  local p q n k tt
  for p in w8:4608:4608:1024 q5:6144:5120:1024 w8:5120:17408:1024 w8:2048:16384:1024 q4:131072:5120:1024 w8:2048:32768:256; do
    IFS=: read -r q n k tt <<< "$p"
    run "abprep77_${q}_${n}_${k}" env QTYPE=$q N=$n K=$k T=$tt timeout 60 $G tools/ab_prep.lua
    grep -E "identical|DIFFERENT|cold us|rror" "$LOGS/abprep77_${q}_${n}_${k}.log" | cut -c1-160
  done
  for only in "x by bulk copies" "largest fp16 scales" "N = 1000"; do
    run "lua_test_linear_cuda_${only// /_}" env GPUBENCH_TEST_ONLY="$only" timeout 200 $G tests/lua/test_linear_cuda.lua
    grep -E "^(ok|FAIL)|passed" "$LOGS/lua_test_linear_cuda_${only// /_}.log" | cut -c1-160
  done
  cluster_suite t77 ""
  awk '$6 == 1024 {print $1, $2, $4, $5, $7, $(NF-1), $NF}' "$LOGS/suite_cuda_t77.log" | head -30
}

phase_next78() { # the suite with the prepass's twin for long rows (K >= 16384), then the Linear CUDA test's fp16 cases
  cluster_suite t78 ""
  awk '$6 == 1024 {print $1, $2, $4, $5, $7, $(NF-1), $NF}' "$LOGS/suite_cuda_t78.log" | head -30
  run lua_test_linear_cuda_xtile env GPUBENCH_TEST_ONLY="x by bulk copies" timeout 200 $G tests/lua/test_linear_cuda.lua
  grep -E "^(ok|FAIL)|passed" "$LOGS/lua_test_linear_cuda_xtile.log" | cut -c1-160
}

phase_next80() { # the sums through shared memory and the factors read once (LN_EPI = 1, docs/kernels/cuda-linear.md,
  # "The epilogue's factors"; the table keeps 0 until this A/B): its GPU test (FP64 and the bits of LN_EPI = 0), the
  # A/B at T = 1024 points below 0.6 of cuBLASLt and two others, then the CUDA suite with cuBLAS and the whole Linear
  # CUDA test
  GPUBENCH_TEST_ONLY="LN_EPI" run lua_test_linear_epi timeout 150 $G tests/lua/test_linear_cuda.lua
  grep -E "^(ok|FAIL|SKIP)" "$LOGS/lua_test_linear_epi.log" | cut -c1-300
  grid_at ep80 1024 "LN_EPI=0,1" ${EP80_POINTS:-w8:4608:4608 w8:2048:4096 q5:1152:1152 q4:3456:1152 q4:4304:1152 \
    q6:1152:1536 w8:2048:16384 nvfp4:14336:5120}
  cluster_suite t80 ""
  awk '$6 == 1024 {print $1, $2, $4, $5, $7, $(NF-1), $NF}' "$LOGS/suite_cuda_t80.log" | head -30
  run lua_test_linear_cuda timeout ${TEST_LIMIT:-300} $G tests/lua/test_linear_cuda.lua
  grep -E "^(ok|FAIL)|passed" "$LOGS/lua_test_linear_cuda.log" | cut -c1-120 | grep -v "^ok"
}

phase_short80() { # what a short T = 1024 point pays besides its units: the time against K at fixed N (the table's
  # one kernel at every K: q4 3456 rows unsplit, q5 1152 rows 3 slices in a cluster, w8 2048 rows 2 slices in a
  # cluster), ours and cuBLASLt's (run once 2026-12-07, docs/kernels/cuda-linear.md "What the short points pay"),
  # then ncu's full set of one call at q5 1152^2 and q4 3456 x 1152, then q5 1152^2 and q6 1152 x 1536 with 128 rows
  # of x, unsplit or 2 slices in a cluster, against the table's 3 slices
  local p q n k
  for p in q4:3456:1152 q4:3456:2304 q4:3456:4608 q4:3456:9216 q5:1152:1152 q5:1152:2304 q5:1152:4608 \
           w8:2048:4096 w8:2048:8192 w8:2048:16384; do
    IFS=: read -r q n k <<< "$p"
    run "short80_${q}_${n}_$k" timeout 60 $G --backend cuda experiments/linear_suite.lua --qtype $q --n $n --k $k \
      --t 1024 --json "$LOGS/short80_${q}_${n}_$k.jsonl"
    awk '$6 == 1024 {print $1, $2, $4, $5, $7, $(NF-1), $NF}' "$LOGS/short80_${q}_${n}_$k.log"
  done
  WGNCU="${WGNCU:-q5:1152:1152 q4:3456:1152}" bash "$0" wgncu
  # the clusters' fixed part against fewer slices or none, 128 rows of x (twice the tiles)
  grid_at sh80 1024 "LN_BN=128;LN_KSPLIT=1;LN_CLUSTER=0" q5:1152:1152 q6:1152:1536
  grid_at sh80c 1024 "LN_BN=128,256;LN_KSPLIT=2;LN_CLUSTER=1" q5:1152:1152 q6:1152:1536
}

phase_short83() { # short80 without its K sweep (run 2026-12-07), then the CUDA suite with the table of LN_EPI = 1
  WGNCU="${WGNCU:-q5:1152:1152 q4:3456:1152}" bash "$0" wgncu
  grid_at sh80 1024 "LN_BN=128;LN_KSPLIT=1;LN_CLUSTER=0" q5:1152:1152 q6:1152:1536
  grid_at sh80c 1024 "LN_BN=128,256;LN_KSPLIT=2;LN_CLUSTER=1" q5:1152:1152 q6:1152:1536
  cluster_suite t83 ""
  awk '$6 == 1024 {print $1, $2, $4, $5, $7, $(NF-1), $NF}' "$LOGS/suite_cuda_t83.log" | head -30
}

phase_ra84() { # the weights from registers (LN_XTILE = 3, docs/kernels/cuda-linear.md, "The weights from registers"):
  # its GPU test, then the A/B against the table at the short T = 1024 points and three large ones (RA_STAGES: 6)
  GPUBENCH_TEST_ONLY="weights from registers" run lua_test_linear_ra timeout 200 $G tests/lua/test_linear_cuda.lua
  grep -E "^(ok|FAIL)|passed" "$LOGS/lua_test_linear_ra.log" | cut -c1-200 | head -8
  grid_at ra84 1024 "LN_XTILE=3;LN_HALF=1;LN_STAGGER=0;LN_WPF=1;LN_STAGES=${RA_STAGES:-6}" q4:3456:1152 q5:1152:1152 \
    q6:1152:1536 w8:2048:4096 q4:4304:1152 w8:4608:4608 q5:6144:5120 w8:14336:5120 q4:131072:5120
}

phase_ra86() { # ra84's A/B alone at five points (each variant FP64-checked before it is timed)
  grid_at ra86 1024 "LN_XTILE=3;LN_HALF=1;LN_STAGGER=0;LN_WPF=1;LN_STAGES=6" q4:3456:1152 q5:1152:1152 w8:2048:4096 \
    w8:14336:5120 q4:131072:5120
}

phase_ra87() { # the weights from registers after the per-k-step waits (3) and with each unit's products waited
  # for at its end (4: if 4 passes and 3 fails, the hardware reads A registers until completion): the A/B at two
  # points, then its GPU test
  grid_at ra87 1024 "LN_XTILE=3,4;LN_HALF=1;LN_STAGGER=0;LN_WPF=1;LN_STAGES=6" q4:3456:1152 w8:2048:4096
  GPUBENCH_TEST_ONLY="weights from registers" run lua_test_linear_ra timeout ${RA_TEST_LIMIT:-90} $G tests/lua/test_linear_cuda.lua
  grep -E "^(ok|FAIL)|passed" "$LOGS/lua_test_linear_ra.log" | cut -c1-300 | head -8
}

phase_ra88() { # ra87, then the A/B at seven more of ra84's points of whichever of LN_XTILE = 3 and 4 was right at both of ra87's
  # points (3 first); first the probe of wgmma with A from registers on its own (fragment layout, and whether the
  # hardware has read A registers by issue)
  GPUBENCH_TEST_ONLY="A from registers" run lua_test_ra_probe timeout 60 $G tests/lua/test_linear_cuda.lua
  grep -E "^(ok|FAIL)|^# wgmma_ra_probe|passed" "$LOGS/lua_test_ra_probe.log" | cut -c1-300 | head -6
  phase_ra87
  local xt
  xt=$(python3 - "$LOGS"/ra87_*.jsonl <<'PY'
import json, re, sys
bad, seen = set(), set()
for f in sys.argv[1:]:
    for line in open(f):
        try: r = json.loads(line)
        except ValueError: continue
        m = re.search(r'XTILE=(\d)', str(r.get('variant', '')))
        if not m: continue
        seen.add(m.group(1))
        if r.get('status') != 'ok': bad.add(m.group(1))
print(next((x for x in '34' if x in seen and x not in bad), ''))
PY
)
  echo "ra88: right at both points: LN_XTILE=${xt:-none}"
  [[ -n $xt && ${RA88_AB:-1} == 1 ]] || return 0 # RA88_AB=0: the probe and ra87 alone
  grid_at ra88 1024 "LN_XTILE=$xt;LN_HALF=1;LN_STAGGER=0;LN_WPF=1;LN_STAGES=6" q5:1152:1152 q6:1152:1536 \
    q4:4304:1152 w8:4608:4608 q5:6144:5120 w8:14336:5120 q4:131072:5120
}

phase_ra85() { # the CUDA suite with cuBLAS with the weights from registers where the table has fp16 weights
  # (WGMMA_RA = 1), everywhere for the integer formats (2), and the table (RA_SUITES: which, "2 1 0")
  local tag
  for tag in ${RA_SUITES:-2 1 0}; do
    cluster_suite ra85_$tag "r.WGMMA_RA = $tag"
    awk '$6 == 1024 {print $1, $2, $4, $5, $7, $(NF-1), $NF}' "$LOGS/suite_cuda_ra85_$tag.log" | head -30
  done
}

phase_vk83() { # next79 without its CUDA suite (short83 has it)
  run suite_vulkan_t79 timeout 300 $G --backend vulkan experiments/linear_suite.lua --suite all --vendor off \
    --json "$LOGS/suite_vulkan_t79.jsonl"
  grep -E "fixed cost:|wall time| T=1 |rror" "$LOGS/suite_vulkan_t79.log" | cut -c1-150 | head -24
  run lua_test_linear_cuda timeout ${TEST_LIMIT:-300} $G tests/lua/test_linear_cuda.lua
  grep -E "^(ok|FAIL)|passed" "$LOGS/lua_test_linear_cuda.log" | cut -c1-120 | grep -v "^ok"
  grid_at ph79 1024 "PREP_HOLD=0,12" w8:2048:8192 w8:2048:12288 w8:5120:12288 q5:1152:12288
}

phase_next79() { # the next session's (an H200 if one comes): the CUDA suite with cuBLAS and the Vulkan suite with the
  # table as of 2026-12-07 (bulk copies, tail, prepass by 16 bytes and its twin for long rows, fp16 weights on the
  # short grids of 64 units or more), the whole Linear CUDA test (the prepass's block code and its twin at K = 16392 were
  # never run on a GPU), the twin's threshold (PREP_HOLD = 0 against 12 between K = 5120 and 16384)
  cluster_suite t79 ""
  awk '$6 == 1024 {print $1, $2, $4, $5, $7, $(NF-1), $NF}' "$LOGS/suite_cuda_t79.log" | head -30
  phase_vk83
}

phase_next66() { # next63 (the suite under the cluster rules against the workspace rules, A B A, and the Linear CUDA
  # test), then ncu's full set of one call at three short T = 1024 points (what limits the per-tile rate now)
  phase_next63
  WGNCU="${WGNCU:-w8:4608:4608 q5:1152:1152 w8:14336:5120}" bash "$0" wgncu
}

phase_next67() { # next65's second half: clusters below T = 256 at the suite's T = 128 points with slices, then the
  # suite with the cluster rules from T = 65 (CLUSTER_FROM_T) up to 8 slices
  cluster_ab cl65 128 q5:1152:4304:4,8,16 q4:3456:1152:2,4 w8:5120:17408:4,8 q6:1152:1536:4,8 q5:6144:5120:2,4
  cluster_suite cl_t65 "r.CLUSTER_FROM_T = 65; r.CLUSTER_SLICES = 8"
}

phase_next60() { # LN_CLUSTER whole in one call: the A/B at five short T = 1024 points (q5 6144x5120: 2 slices against none, the
  # grid of 1.45 waves made 2.9), its GPU test, then the CUDA
  # suite with cuBLAS with the rule's slices in clusters (CLUSTER_SLICES = 8; its T = 1024 rows against next54's)
  cluster_ab cl60 1024 q5:1152:1152:2,3 w8:2048:4096:2,4 w8:4608:4608:2,4 q5:1152:4304:2,4 q5:6144:5120:2
  GPUBENCH_TEST_ONLY="LN_CLUSTER = 1" run lua_test_linear_cluster timeout 150 $G tests/lua/test_linear_cuda.lua
  grep -E "^(ok|FAIL)" "$LOGS/lua_test_linear_cluster.log" | cut -c1-300
  phase_next62
}

phase_next54() { # the CUDA suite with the vendor column after the slice rules of next53 (one wave from T = 256, w8
  # and q5's second rule from 64 units a slice, w8's mma route below one tile per SM), then the quantized GEMV
  # tables at T = 2, 3, 4 with GEMV_KHALF and q6_k's GEMV_KPF taken (Vulkan against CUDA)
  run suite_cuda_vendor timeout 240 $G --backend cuda experiments/linear_suite.lua --suite all \
    --json "$LOGS/suite_cuda_vendor.jsonl"
  grep -E "fixed cost:|wall time|rror" "$LOGS/suite_cuda_vendor.log" | cut -c1-190
  awk '$6 == 1024 {print $1, $2, $4, $5, $7, $15, $(NF-1), $NF}' "$LOGS/suite_cuda_vendor.log" | head -30
  quant_tables 2 3 4
}

phase_next47() { # GEMV_WG's A/B whole (next45 with VKWG_MORE=1), then the CUDA suite with the vendor column: issue 14's
  # T = 1024 against cuBLAS after LN_XCOPY (the table's since 2026-12-05, no suite with cuBLAS since)
  VKWG_MORE=1 phase_next45
  run suite_cuda_vendor timeout 240 $G --backend cuda experiments/linear_suite.lua --suite all \
    --json "$LOGS/suite_cuda_vendor.jsonl"
  grep -E "fixed cost:|wall time|rror" "$LOGS/suite_cuda_vendor.log" | cut -c1-190
  awk '$6 == 1024 {print $1, $2, $4, $5, $7, $15, $(NF-1), $NF}' "$LOGS/suite_cuda_vendor.log" | head -30
}

phase_next46() { # what 2026-12-06's last session could not run (no machine): GEMV_WG's A/B whole (next45 with
  # VKWG_MORE=1), then next44 (next36's tables and SwiGLU LLaMA-2-7B with --overlap), for an H200
  VKWG_MORE=1 phase_next45
  phase_next44
}

phase_next45() { # the Vulkan integer GEMV kernels with smaller workgroups (GEMV_WG 64, 128 against 256) and wider lane
  # groups (GEMV_T 16) at T = 2 and 4, 14336 x 5120 rotated, validated: from T = 2 one 256-invocation workgroup is all
  # an SM keeps (141-255 registers); smaller ones fill every SM, wider lane groups add warps a row
  run kstats_wg timeout 60 $G tools/kernel_stats.lua --backend vulkan \
    file:kernels/vulkan/gemv_q4_k.comp:main:64:GEMV_IDOT=1,GEMV_T=8,GEMV_NR=4,GEMV_TOKENS=4,GEMV_XB=128,GEMV_WG=64 \
    file:kernels/vulkan/gemv_q4_k.comp:main:128:GEMV_IDOT=1,GEMV_T=8,GEMV_NR=4,GEMV_TOKENS=4,GEMV_XB=128,GEMV_WG=128
  grep -E "^file|Register|Shared" "$LOGS/kstats_wg.log" | cut -c1-200
  variants vkwg_q4k_T4 q4_k 14336 5120 "GEMV_TOKENS=4;GEMV_IDOT=1;GEMV_WG=64,128,256;GEMV_T=8,16"
  variants vkwg_q80_T4 q8_0 14336 5120 "GEMV_TOKENS=4;GEMV_IDOT=1;GEMV_WG=64,128,256"
  [[ ${VKWG_MORE:-0} == 1 ]] || return 0
  variants vkwg_q4k_T2 q4_k 14336 5120 "GEMV_TOKENS=2;GEMV_IDOT=1;GEMV_WG=64,128,256"
  variants vkwg_q6k_T4 q6_k 14336 5120 "GEMV_TOKENS=4;GEMV_IDOT=2;GEMV_WG=64,128,256"
}

phase_next44() { # next36's tables, then issue 16's near-miss cells (LLaMA-2-7B at M = 4, 8, rotated, both modes,
  # --overlap) on CUDA: for the target card when one comes
  phase_next36
  run swiglu_7b_ov timeout 150 $G --backend cuda experiments/swiglu_ab.lua --shape 11008,4096 --m-values 1,4,8 \
    --mode both --regime rotated --overlap --rounds 1 --json "$LOGS/swiglu_7b_ov.jsonl"
  grep -E "^\| |rror|ceiling" "$LOGS/swiglu_7b_ov.log" | cut -c1-180 | head -20
}

phase_next43() { # for an H200: next42's tests and A/B, then next36's tables (fixed cost, both Linear suites, the
  # Vulkan f32 rule, the CUDA MoE qwen3 gate_up table): this session's changes on the target card
  phase_next42
  phase_next36
}

phase_next42() { # this session's Vulkan Linear tests on the NVIDIA driver (the widened lane groups, the q6 split), the
  # GPU module's test on both backends, and the thin-grid rule at T = 2 and 3 against the geometry before it
  run lin_test_vk timeout 240 $G tests/lua/test_linear_vulkan.lua
  grep -E "^(ok|FAIL)|passed" "$LOGS/lin_test_vk.log" | cut -c1-160
  run gpu_module_test timeout 200 $G tests/lua/test_gpu_module.lua
  grep -E "^FAIL|passed" "$LOGS/gpu_module_test.log" | cut -c1-160
  vklin_points vkrule23 30 "w8:5120:17408:2,3:LIN_LANES=32;LIN_NR=4" "w8:2048:16384:2,3:LIN_LANES=32;LIN_NR=4" \
    "w8:5120:10240:2,3:LIN_LANES=32;LIN_NR=4"
}

vklin_points() { # vklin_points PREFIX SAMPLES POINT...: one Vulkan linear_variants process (dot route, A B B A
  # inside, every variant FP64-checked) per POINT "QTYPE:N:K:TS:GRID", logs PREFIX_QTYPE_N_K, its table's rows
  local prefix=$1 samples=$2 pt q n k ts grid name; shift 2
  for pt in "$@"; do
    IFS=: read -r q n k ts grid <<< "$pt"
    name="${prefix}_${q}_${n}_$k"
    run "$name" timeout 150 $G --backend vulkan experiments/linear_variants.lua --qtype $q --n $n --k $k --t $ts \
      --route dot --samples $samples --grid "$grid" --json "$LOGS/$name.jsonl"
    grep -E "^ +[0-9]+ |rror" "$LOGS/$name.log" | cut -c1-130
  done
}

kstats() { # kstats NAME ITEM...: tools/kernel_stats.lua on Vulkan then CUDA, one line a kernel: registers, shared bytes
  # (CUDA also blocks and warps an SM), then the item and its defines
  local name=$1 b; shift
  for b in vulkan cuda; do
    run "kstats_${name}_$b" timeout 240 $G tools/kernel_stats.lua --backend $b "$@"
    if [[ $b == vulkan ]]; then
      awk '/^[a-z]+:/{h=$0} /Register Count/{r=$3} /Shared Memory Size/{print r, $4, h}' "$LOGS/kstats_${name}_$b.log"
    else
      awk '/^[a-z]+:/{h=$0} /registers_per_thread/{r=$2} /static_shared/{s=$2} /^  blocks_per_sm/{bl=$2} /^  warps_per_sm/{print r, s, bl, $2, h}' \
        "$LOGS/kstats_${name}_$b.log"
    fi | cut -c1-230
  done
}

phase_next41() { # the MoE kernels' statistics (qwen3 gate_up, m = 1, 8, 64, both backends), then both Linear suites
  # with the Vulkan dot route's q6 split at T = 1 and the thin-grid rule (one call: Vulkan against CUDA)
  local v m items=""
  for v in batched grouped fused_gate_up; do for m in 1 8 64; do items+=" moe:$v:qwen3_30b_a3b:gate_up:$m"; done; done
  kstats moe $items
  linear_suites
}

phase_next40() { # kernel statistics of the GEMV table's kernels at 14336 x 5120, T = 1, 2, 4, 8, both backends
  # (issue 17's Vulkan quantized kernels are 1.5-2.2x CUDA's time at T = 4 and 8: registers and shared memory first)
  local f t items=""
  for f in q4_0 q4_k q5_k q6_k q8_0 f16 bf16 f32; do for t in 1 2 4 8; do items+=" gemv:$f:14336:5120:$t"; done; done
  kstats gemv $items
}

phase_next39() { # kernel statistics (k:stats): the GPU module's test on both backends (CUDA's exact static shared
  # memory and occupancy; Vulkan's through VK_KHR_pipeline_executable_properties on the NVIDIA driver), then what the
  # Linear dot kernels at T = 1 and the SwiGLU kernels use on each backend (tools/kernel_stats.lua)
  GPUBENCH_TEST_ONLY="kernel statistics" run stats_test timeout 120 $G tests/lua/test_gpu_module.lua
  grep -vE "^SKIP" "$LOGS/stats_test.log" | cut -c1-200
  local b
  for b in vulkan cuda; do
    run "kstats_$b" timeout 200 $G tools/kernel_stats.lua --backend $b linear:q6:248320:5120:1 linear:q6:248320:2048:1 \
      linear:q4:131072:5120:1 linear:q4:131072:2048:1 linear:w8:34816:5120:1 linear:w8:5120:17408:1 linear:q4:131072:5120:16 \
      swiglu:13824:5120:1 swiglu:13824:5120:4 swiglu:13824:5120:8
    grep -vE "^\s*$" "$LOGS/kstats_$b.log" | cut -c1-220 | head -120
  done
}

phase_next38() { # the Vulkan dot route's grid rule (lane groups widened where rows alone leave under three workgroups
  # per SM) against the geometry before it at the suite's points it changes, 20 then 60 samples (A B B A inside each);
  # LIN_Q6_SPLIT at the q6 heads; then the Vulkan suite
  local rule=("w8:5120:17408:1,2:LIN_LANES=32;LIN_NR=4" "w8:2048:16384:1:LIN_LANES=32;LIN_NR=4"
    "w8:5120:10240:1:LIN_LANES=32;LIN_NR=4" "w8:2048:4096:1:LIN_LANES=32;LIN_NR=4" "w8:4608:4608:1:LIN_LANES=32;LIN_NR=4"
    "q5:6144:5120:1:LIN_LANES=32" "q5:1152:4304:1:LIN_LANES=32")
  vklin_points vkrule_s20 20 "${rule[@]}" "q6:248320:5120:1,2:LIN_Q6_SPLIT=0,1" "q6:248320:2048:1:LIN_Q6_SPLIT=0,1"
  vklin_points vkrule_s60 60 "${rule[@]}" "q6:248320:5120:1,2:LIN_Q6_SPLIT=0,1"
  run suite_vulkan timeout 200 $G --backend vulkan experiments/linear_suite.lua --suite all --vendor off \
    --json "$LOGS/suite_vulkan.jsonl"
  grep -E "fixed cost:|wall time| T=1 |rror" "$LOGS/suite_vulkan.log" | cut -c1-150 | head -24
}

phase_next37() { # the Vulkan Linear dot route at T = 1: LIN_Q6_SPLIT (built 2026-12-04, never timed) at the q6 heads, and
  # wider lane groups (more workgroups) where the table's give a thin grid: w8 (32 rows a workgroup) and q5 at the
  # suite's T = 1 points; one linear_variants process per point, A B B A inside, every variant FP64-checked first
  vklin_points vkln 20 "q6:248320:5120:1,2:LIN_Q6_SPLIT=0,1" "q6:248320:2048:1:LIN_Q6_SPLIT=0,1" \
    "w8:5120:17408:1:LIN_LANES=32,64,128;LIN_NR=1,2,4" "w8:2048:16384:1:LIN_LANES=32,64,128;LIN_NR=1,2,4" \
    "w8:14336:5120:1:LIN_LANES=32,64,128;LIN_NR=1,2,4" "w8:34816:5120:1:LIN_LANES=32,64;LIN_NR=2,4" \
    "q5:6144:5120:1:LIN_LANES=32,64,128;LIN_NR=1,2,4"
}

phase_next36() { # what 2026-12-06's later session measured on H100s only, for an H200: the Vulkan and CUDA Linear suites
  # (cold samples as one command buffer on Vulkan: T = 1 READ_%, fixed_us), the f32 rule through gemv_table (T = 6, 8),
  # and the CUDA MoE table's new fused_gate_up geometry (qwen3 gate_up, all variants, both regimes)
  fixed_probes "^default|^direct=1"
  linear_suites
  vkf32_tables
  run moe_qwen3_cuda timeout 200 $G --backend cuda experiments/moe_scaling.lua --config qwen3_30b_a3b --projection gate_up \
    --m 1,8,32,64 --regime both --rounds 1 --json "$LOGS/moe_qwen3_cuda.jsonl"
  grep -E "^(per_token|batched|grouped|fused)|rror" "$LOGS/moe_qwen3_cuda.log"
}

phase_next35() { # the GPU tests this session changed (test_gemv_cuda's EARLY_RELEASE and XSHARED through one helper;
  # test_moe_cuda whole: fused_gate_up's new default), then ncu's warp stall reasons (per issued instruction) of one
  # MoE step each (grouped m = 64 cold, batched and fused_gate_up m = 8 l2) and of the q4_k GEMV at T = 1, 14336 x 5120
  GPUBENCH_TEST_ONLY="variants match" run gemv_test_sw timeout 200 $G tests/lua/test_gemv_cuda.lua
  grep -E "^(ok|FAIL)" "$LOGS/gemv_test_sw.log" | cut -c1-160
  run moe_test_all timeout 240 $G tests/lua/test_moe_cuda.lua
  grep -E "^(ok|FAIL)|passed" "$LOGS/moe_test_all.log" | cut -c1-160
  local st="" r
  for r in barrier long_scoreboard short_scoreboard mio_throttle math_pipe_throttle wait not_selected lg_throttle \
      dispatch_stall no_instruction membar branch_resolving tex_throttle drain selected; do
    st+="${st:+,}smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"
  done
  st+=",gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active"
  local cell v mm rg
  for cell in grouped:64:cold batched:8:l2 fused_gate_up:8:l2; do
    IFS=: read -r v mm rg <<< "$cell"
    run "ncust_moe_${v}_m$mm" timeout 120 $NCU --cache-control none --clock-control none --metrics "$st" \
      -k regex:$(moe_kernel_re $v) \
      -s 30 -c 1 $G --backend cuda experiments/moe_scaling.lua --config qwen3_30b_a3b --m $mm --variants $v \
      --projection gate_up --regime $rg --rounds 1
    stall_lines "$LOGS/ncust_moe_${v}_m$mm.log"
  done
  run ncust_gemv_q4_k timeout 120 $NCU --cache-control all --clock-control none --metrics "$st" -k regex:gemv -c 1 \
    $G tools/profile_gemv_once.lua q4_k
  stall_lines "$LOGS/ncust_gemv_q4_k.log"
}

phase_next34() { # the CUDA integer-dot GEMV with x in registers (XSHARED=0; in shared memory it held the one-warp
  # blocks to 11 an SM; fused_gate_up won with it): each quantized format at T = 1, 131072 and 14336 x 5120 rotated,
  # beside its table kernel (the shape rules' defines), validated (reversed at 5x the iterations)
  GPUBENCH_TEST_ONLY="XSHARED" run gemv_test_xs timeout 200 $G tests/lua/test_gemv_cuda.lua
  grep -E "^(ok|FAIL)" "$LOGS/gemv_test_xs.log" | cut -c1-200
  local fm n
  for fm in q4_k:131072:ROWS=16 q5_k:131072: q6_k:131072: q8_0:131072: q4_0:131072: \
      q4_k:14336: q5_k:14336: q6_k:14336:BULK=1 q8_0:14336: q4_0:14336:; do
    IFS=: read -r f m d <<< "$fm"
    n="cuxs_${f}_$m"
    run "$n" timeout 100 env M=$m K=5120 ITERS=200 $G --backend cuda experiments/gemv_variants.lua --rotate --rounds 1 \
      --validate --kernels $f --grid "${d:+$d;}XSHARED=1,0" --json "$LOGS/$n.jsonl"
    grep -E "^$f|rror" "$LOGS/$n.log"
  done
}

phase_next33() { # Vulkan cold samples as one command buffer (the timer's start and stop recorded with a one-buffer
  # batch: host/vulkan/launch.c, timed_one_cb): the C batch test on the NVIDIA driver, the fixed-cost probe on both
  # backends, then linear_suite --suite all on both (no vendor column), whose T = 1 rows carry fixed_us and READ_%
  run vk_batch_test timeout 120 $BIN/test_vulkan_batch
  grep -E "^(ok|not ok)|checks" "$LOGS/vk_batch_test.log"
  fixed_probes
  linear_suites
}

phase_next32() { # fused_gate_up with x in registers and 8 rows a warp (XSHARED=0, ROWS=8, PARTS=1: won at every m in
  # next31, A B C D A): reversed, C A A C at ITERS 200, qwen3 m = 1, 8, 32, 64, both regimes; then mixtral C A, m = 1, 4, 8
  local geo n i=0
  for cg in ${FUSED_GEOS:-qwen3_30b_a3b:XSHARED=0,ROWS=8,PARTS=1 qwen3_30b_a3b:ROWS=14 qwen3_30b_a3b:ROWS=14 \
      qwen3_30b_a3b:XSHARED=0,ROWS=8,PARTS=1 mixtral_8x7b:XSHARED=0,ROWS=8,PARTS=1 mixtral_8x7b:ROWS=14}; do
    i=$((i + 1)); geo=${cg#*:}
    local ms=1,8,32,64; [[ ${cg%%:*} == mixtral_8x7b ]] && ms=1,4,8
    n="moefx_${i}_${cg%%:*}_${geo//[=,]/_}"
    run "$n" timeout 120 env ITERS=200 $G --backend cuda experiments/moe_scaling.lua --config ${cg%%:*} --projection gate_up \
      --variants fused_gate_up --m $ms --regime both --rounds 1 --fused-geometry $geo --json "$LOGS/$n.jsonl"
    grep -E '^fused|rror' "$LOGS/$n.log"
  done
}

phase_next31() { # the CUDA pairs and fused kernels with x in registers (XSHARED=0: 11 -> 15 one-warp blocks an SM):
  # the GPU test, then batched and fused_gate_up A B C D A (qwen3 gate_up, m = 1, 8, 32, 64, both regimes) and down A B A;
  # then the cold sample's fixed cost on both backends (tools/fixed_cost_probe.lua, with its one-recording rows)
  GPUBENCH_TEST_ONLY="XSHARED" run moe_test_xs timeout 200 $G tests/lua/test_moe_cuda.lua
  grep -E "^(ok|FAIL)" "$LOGS/moe_test_xs.log" | cut -c1-200
  local geo n proj
  for pg in ${PAIRS_GEOS:-gate_up:ROWS=14 gate_up:XSHARED=0 gate_up:XSHARED=0,ROWS=8,PARTS=1 gate_up:XSHARED=0,ROWS=16,WARPS=2 \
      gate_up:ROWS=14 down:ROWS=14 down:XSHARED=0 down:ROWS=14}; do
    proj=${pg%%:*}; geo=${pg#*:}
    n="moexs_${proj}_${geo//[=,]/_}"; [[ -f $LOGS/$n.jsonl ]] && n=${n}_b
    local vs=batched; [[ $proj == gate_up ]] && vs=batched,fused_gate_up
    run "$n" timeout 80 $G --backend cuda experiments/moe_scaling.lua --config qwen3_30b_a3b --projection $proj \
      --variants $vs --m 1,8,32,64 --regime both --rounds 1 --pairs-geometry $geo --fused-geometry $geo --json "$LOGS/$n.jsonl"
    grep -E '^(batched|fused)|rror' "$LOGS/$n.log"
  done
  fixed_probes
}

phase_next30() { # the CUDA pairs kernel on the int8 tensor cores (moe_q4k_pairs_i8.cu; lost and removed since, 24bb38f has
  # it, so this phase runs at that commit only): its GPU test,
  # then batched at its geometries beside the integer dot (A ... A), qwen3 gate_up m = 1, 8, 32, 64, both regimes, and
  # down for the dot and two of them; then Vulkan f32 through gemv_table at T = 6 and 8 (for_device's W in B)
  GPUBENCH_TEST_ONLY="int8 tensor cores" run moe_test_i8 timeout 200 $G tests/lua/test_moe_cuda.lua
  grep -E "^(ok|FAIL)" "$LOGS/moe_test_i8.log" | cut -c1-200
  local geo n proj
  for pg in ${PAIRS_GEOS:-gate_up:ROWS=14 gate_up:I8=1 gate_up:I8=1,WARPS=2,KSPLIT=4 gate_up:I8=1,WARPS=1,KSPLIT=8 \
      gate_up:I8=1,WARPS=4,KSPLIT=1 gate_up:I8=1,WARPS=2,KSPLIT=2,PREFETCH=1 gate_up:I8=1,WARPS=8,KSPLIT=1 gate_up:ROWS=14 \
      down:ROWS=14 down:I8=1 down:I8=1,WARPS=2,KSPLIT=4 down:ROWS=14}; do
    proj=${pg%%:*}; geo=${pg#*:}
    n="moepi8_${proj}_${geo//[=,]/_}"; [[ -f $LOGS/$n.jsonl ]] && n=${n}_b
    run "$n" timeout 60 $G --backend cuda experiments/moe_scaling.lua --config qwen3_30b_a3b --projection $proj \
      --variants batched --m 1,8,32,64 --regime both --rounds 1 --pairs-geometry $geo --json "$LOGS/$n.jsonl"
    grep -E '^batched|rror' "$LOGS/$n.log"
  done
  vkf32_tables
}

phase_next29() { # f32's W in B (won at T = 8 and 6 in next28) at T = 5, 6, 7 and at 131072 rows, validated; then the
  # CUDA pairs kernel's geometries (batched, qwen3 gate_up, m = 1, 8, 32, 64, both regimes; never swept), A ... A
  local wb="GEMV_COOP=1;COOP_REG=3;COOP_WR=1,2;COOP_KS=4;COOP_U=1;COOP_RT=2,4"
  for T in 5 6 7; do variants "vkf32wb29_T$T" f32 14336 5120 "GEMV_TOKENS=$T;GEMV_T=16;GEMV_NR=8|GEMV_TOKENS=$T;$wb"; done
  variants vkf32wb29_big_T8 f32 131072 5120 "GEMV_TOKENS=8;GEMV_T=16;GEMV_NR=8|GEMV_TOKENS=8;$wb"
  local geo n
  for geo in ${PAIRS_GEOS:-ROWS=14,WARPS=1,STAGES=2,PARTS=2 ROWS=8,PARTS=1 ROWS=8,STAGES=3 ROWS=4,PARTS=1 \
      ROWS=16,WARPS=2 ROWS=8,WARPS=4 ROWS=6,WARPS=2,STAGES=3 ROWS=14,WARPS=1,STAGES=2,PARTS=2}; do
    n="moepairs_${geo//[=,]/_}"; [[ -f $LOGS/$n.jsonl ]] && n=${n}_b
    run "$n" timeout 60 $G --backend cuda experiments/moe_scaling.lua --config qwen3_30b_a3b --projection gate_up \
      --variants batched --m 1,8,32,64 --regime both --rounds 1 --pairs-geometry $geo --json "$LOGS/$n.jsonl"
    grep -E '^batched|rror' "$LOGS/$n.log"
  done
}

phase_next28() { # next27 (f32 and q4_0 W in B, never run on a GPU), then ncu sections of one MoE step of each of
  # MOE_NCU_CELLS (variant:m:regime; qwen3 gate_up): where batched and grouped spend their time now
  phase_next27
  local S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy
     --section LaunchStats --section SchedulerStats --section ComputeWorkloadAnalysis --section InstructionStats"
  for cell in ${MOE_NCU_CELLS:-batched:8:l2 batched:8:cold grouped:64:cold batched:64:cold}; do
    IFS=: read -r v mm rg <<< "$cell"
    run "ncu_moe_${v}_m${mm}_$rg" timeout 120 $NCU --cache-control none --clock-control none $S \
      -k regex:$(moe_kernel_re $v) -s 30 -c 1 \
      $G --backend cuda experiments/moe_scaling.lua --config qwen3_30b_a3b --m $mm --variants $v \
      --projection gate_up --regime $rg --rounds 1
    grep -E 'Duration|DRAM Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Issue Slots Busy|No Eligible|Stall|Grid Size|Eligible Warps|L2 Hit|Executed Ipc A|Pipe|Block Limit|Executed Instructions' \
      "$LOGS/ncu_moe_${v}_m${mm}_$rg.log" | head -40
  done
}

phase_next27() { # f32 on the fp16 matrices, W in B as hi + lo (COOP_REG=3, COOP_FMT=8), and q4_0's W in B on the int8 ones
  # (never run on a GPU): the GPU oracle test (both), then f32 beside the table's scalar kernel (GEMV_T 16, NR 8) at T = 8, 6
  # and 4, and q4_0 beside its table kernel at T = 8 and 4; 14336 x 5120 rotated, validated
  GPUBENCH_TEST_ONLY="COOP_REG=2 and 3: f16" run lua_test_vk_wide timeout 200 $G tests/lua/test_gemv_vulkan_coop.lua
  grep -E "^(ok|FAIL|SKIP)" "$LOGS/lua_test_vk_wide.log" | grep -v GPUBENCH_TEST_ONLY | cut -c1-300
  for T in 8 6 4; do
    local geo="COOP_WR=1,2;COOP_KS=4;COOP_U=1,2;COOP_RT=2,4"
    [[ $T != 8 ]] && geo="COOP_WR=2;COOP_KS=4;COOP_U=1;COOP_RT=2,4"
    variants "vkf32wb_T$T" f32 14336 5120 "GEMV_TOKENS=$T;GEMV_T=16;GEMV_NR=8|GEMV_TOKENS=$T;GEMV_COOP=1;COOP_REG=3;$geo"
  done
  variants vkq40wb_T8 q4_0 14336 5120 \
    "GEMV_TOKENS=8;GEMV_IDOT=1;GEMV_XPRE=1;GEMV_T=16;GEMV_NR=4|GEMV_TOKENS=8;GEMV_COOP=1;COOP_REG=3;COOP_WR=1,2;COOP_KS=2,4;COOP_RT=2,4"
  variants vkq40wb_T4 q4_0 14336 5120 \
    "GEMV_TOKENS=4;GEMV_IDOT=1;GEMV_T=16;GEMV_NR=8|GEMV_TOKENS=4;GEMV_COOP=1;COOP_REG=3;COOP_WR=1;COOP_KS=2,4;COOP_RT=2"
}

phase_next26() { # Vulkan f32 at T = 8 and 6 (64.9 % at T = 8 with the dense T-row rule's GEMV_T 16, NR 8): a geometry grid
  # at 14336 x 5120 rotated, validated (reversed at 5x the iterations)
  for tg in "8:GEMV_T=8,16,32;GEMV_NR=2,4,8" "6:GEMV_T=16,32;GEMV_NR=4,8"; do
    variants "vkf32_T${tg%%:*}" f32 14336 5120 "GEMV_TOKENS=${tg%%:*};${tg#*:}"
  done
}

phase_next25() { # SwiGLU W in B with x's loads unconditional (rows past M masked) against the scalar kernels, A B B A, at
  # LLaMA-2-7B's 11008 x 4096 and 13B's 13824 x 5120, M = 1, 4, 7, 8, after its GPU test
  VKREG_SHAPES="11008,4096 13824,5120" VKREG_M=1,4,7,8 VKREG_GEOS="SW_WG=64 SW_COOP=1,SW_WB=1 SW_COOP=1,SW_WB=1 SW_WG=64" \
    VKREG_GEMV_FORMATS= VKREG_GEMV_TEST=0 phase_vkreg
}

phase_next24() { # q8_0's W in B with 16-byte stage stores beside the table's integer kernel at T = 8, validated; the f16
  # rule (COOP_REG=3 from T = 5) at the shapes it was not timed at (few rows, long k), T = 5 and 8; the SwiGLU M rule at
  # LLaMA-2-7B's 11008 x 4096, M = 1, 6, 7, 8, A B B A
  local base8="GEMV_TOKENS=8;GEMV_IDOT=1;GEMV_XPRE=1;GEMV_T=16;GEMV_NR=4"
  variants vkq8wb24_T8 q8_0 14336 5120 "$base8|GEMV_TOKENS=8;GEMV_COOP=1;COOP_REG=3;COOP_WR=1,2;COOP_KS=2,4;COOP_RT=2,4"
  for mk in 1024:4096 4096:4096 4096:14336; do
    for T in 8 5; do
      variants "vkf16rule_${mk/:/x}_T$T" f16 ${mk%:*} ${mk#*:} \
        "GEMV_TOKENS=$T;GEMV_T=16;GEMV_NR=8|GEMV_TOKENS=$T;GEMV_COOP=1;COOP_REG=3;COOP_WR=2;COOP_KS=4;COOP_U=2;COOP_RT=4"
    done
  done
  VKREG_SHAPES=11008,4096 VKREG_M=1,6,7,8 VKREG_GEOS="SW_WG=64 SW_COOP=1,SW_WB=1 SW_COOP=1,SW_WB=1 SW_WG=64" \
    VKREG_GEMV_FORMATS= VKREG_GEMV_TEST=0 phase_vkreg
}

phase_next23() { # q8_0's W in B after the in-lane high + low sums (two d a tile and block, one s_b): its GPU oracle
  # test, then beside the table's integer kernel at T = 8 (1 to 4 tiles a subgroup) and 4, validated
  GPUBENCH_TEST_ONLY="COOP_REG=2 and 3: f16" run lua_test_vk_wide timeout 150 $G tests/lua/test_gemv_vulkan_coop.lua
  grep -E "^(ok|FAIL|SKIP)" "$LOGS/lua_test_vk_wide.log" | grep -v GPUBENCH_TEST_ONLY | cut -c1-300
  local base8="GEMV_TOKENS=8;GEMV_IDOT=1;GEMV_XPRE=1;GEMV_T=16;GEMV_NR=4" base4="GEMV_TOKENS=4;GEMV_IDOT=1;GEMV_T=16;GEMV_NR=8"
  for tb in "8:$base8:COOP_WR=1,2;COOP_KS=2,4;COOP_RT=2,3,4" "4:$base4:COOP_WR=1;COOP_KS=2,4;COOP_RT=4"; do
    local T=${tb%%:*} rest=${tb#*:}; local base=${rest%%:*} geo=${rest#*:}
    variants "vkq8wb23_T$T" q8_0 14336 5120 "$base|GEMV_TOKENS=$T;GEMV_COOP=1;COOP_REG=3;$geo"
  done
}

phase_next22() { # one call after next21: q8_0's W in B (COOP_REG=3, int8 matrices): its GPU oracle test, then beside the
  # table's integer kernel at T = 8 and 4, validated; the q8_0 tables of both backends; the SwiGLU table with the M rule on
  # both backends (LLaMA-2-13B, M = 1, 8); f16's rule kernel at m = 8448 and 16896 (one and two workgroups an SM) beside 14336
  GPUBENCH_TEST_ONLY="COOP_REG=2 and 3: f16" run lua_test_vk_wide timeout 150 $G tests/lua/test_gemv_vulkan_coop.lua
  grep -E "^(ok|FAIL|SKIP)" "$LOGS/lua_test_vk_wide.log" | grep -v GPUBENCH_TEST_ONLY | cut -c1-300
  local base8="GEMV_TOKENS=8;GEMV_IDOT=1;GEMV_XPRE=1;GEMV_T=16;GEMV_NR=4" base4="GEMV_TOKENS=4;GEMV_IDOT=1;GEMV_T=16;GEMV_NR=8"
  local wb="GEMV_COOP=1;COOP_REG=3;COOP_WR=1,2;COOP_KS=2,4;COOP_RT=1,2"
  for tb in "8:$base8" "4:$base4"; do
    variants "vkq8wb_T${tb%%:*}" q8_0 14336 5120 "${tb#*:}|GEMV_TOKENS=${tb%%:*};$wb"
  done
  TOKENS_TESTS=0 TOKENS_KERNELS=q8_0 TOKENS_SHAPES="14336:8" bash "$0" tokens "cuda vulkan"
  for b in vulkan cuda; do
    run "swab_$b" timeout 150 $G --backend $b experiments/swiglu_ab.lua --shape 13824,5120 --m-values 1,8 --mode graph \
      --regime rotated --trials 4 --rounds 1 --json "$LOGS/swab_$b.jsonl"
    grep -E "^custom|geometry" "$LOGS/swab_$b.log"
  done
  for m in 8448 16896 14336; do
    WIDE_M=$m WIDE_T=8 WIDE_TAG=_m$m WIDE_FORMATS=f16 WIDE_DIAGS= WIDE_TEST=0 \
      WIDE_GRID="GEMV_TOKENS=@T;GEMV_T=16;GEMV_NR=8|GEMV_TOKENS=@T;GEMV_COOP=1;COOP_REG=3;COOP_WR=2;COOP_KS=4;COOP_U=2;COOP_RT=4" \
      phase_wide
  done
}

phase_next21() { # one call after next20: the f16 rule's geometry (COOP_REG=3) against the scalar kernel at T = 5, 6, 7,
  # validated (reversed at 5x the iterations), a grid around it at T = 8, the f16/bf16 tables with the rule on both backends
  # (the CUDA peer in the same call), then SwiGLU W in B against the scalar kernels at M = 4..8, A B B A
  WIDE_T="5 6 7" WIDE_VALIDATE=1 WIDE_TAG=_n21 WIDE_FORMATS=f16 WIDE_DIAGS= WIDE_TEST=0 \
    WIDE_GRID="GEMV_TOKENS=@T;GEMV_T=16;GEMV_NR=8|GEMV_TOKENS=@T;GEMV_COOP=1;COOP_REG=3;COOP_WR=2;COOP_KS=4;COOP_U=2;COOP_RT=4" \
    phase_wide
  WIDE_T=8 WIDE_VALIDATE=1 WIDE_TAG=_n21 WIDE_FORMATS=f16 WIDE_DIAGS= WIDE_TEST=0 \
    WIDE_GRID="GEMV_TOKENS=@T;GEMV_COOP=1;COOP_REG=3;COOP_WR=2;COOP_KS=2,4;COOP_U=1,2,4;COOP_RT=4|GEMV_TOKENS=@T;GEMV_COOP=1;COOP_REG=3;COOP_WR=1;COOP_KS=4,8;COOP_U=2;COOP_RT=4|GEMV_TOKENS=@T;GEMV_COOP=1;COOP_REG=3;COOP_WR=2;COOP_KS=4;COOP_U=2;COOP_RT=3" \
    phase_wide
  TOKENS_TESTS=0 TOKENS_KERNELS=f16,bf16 TOKENS_SHAPES=${NEXT21_SHAPES:-"14336:5 14336:8 131072:8"} bash "$0" tokens "cuda vulkan"
  VKREG_SHAPES=13824,5120 VKREG_M=4,5,6,7,8 VKREG_GEOS="SW_WG=64 SW_COOP=1,SW_WB=1 SW_COOP=1,SW_WB=1 SW_WG=64" \
    VKREG_GEMV_FORMATS= VKREG_GEMV_TEST=0 phase_vkreg
}

phase_coop_layout() { # the fp16 cooperative-matrix types' component layouts (tools/coop_layout_probe.lua), then vkreg
  run coop_layout timeout 60 $G --backend vulkan tools/coop_layout_probe.lua
  cat "$LOGS/coop_layout.log"
  NEXT19_MORE=${COOP_LAYOUT_MORE:-0} phase_next19
}

phase_next19() { # one call for what is open after 2026-12-05 (device time was scarce): the operands-from-registers kernels
  # (SwiGLU at one shape, the f16/bf16 GEMV at T = 8), the staged int8 coop kernel of q8_0 at T = 8 beside the table's,
  # then the CUDA T-row tables with the rules set on the H100 (never run as a table)
  VKREG_SHAPES=${NEXT19_SW_SHAPES:-13824,5120} VKREG_GEOS=${NEXT19_SW_GEOS:-SW_WG=64 SW_COOP=1} VKREG_GEMV_TEST=0 phase_vkreg
  [[ ${NEXT19_MORE:-1} == 1 ]] || return 0 # the registers-filled kernels only
  local g="GEMV_TOKENS=8;GEMV_IDOT=1;GEMV_XPRE=1;GEMV_T=16;GEMV_NR=4|GEMV_TOKENS=8;GEMV_COOP=1;COOP_WR=2,4;COOP_KS=2,4"
  run vkcoop_q8_0_T8 timeout 90 env M=14336 K=5120 ITERS=200 $G --backend vulkan experiments/gemv_variants.lua --rotate \
    --rounds 1 --kernels q8_0 --grid "$g" --json "$LOGS/vkcoop_q8_0_T8.jsonl"
  grep -E "^q8_0|rror" "$LOGS/vkcoop_q8_0_T8.log"
  TOKENS_TESTS=0 TOKENS_SHAPES=${NEXT19_SHAPES:-14336:8 14336:4 14336:2 14336:1} bash "$0" tokens cuda
}

phase_fixed() {
  # what a cold sample's fixed cost is made of, both backends (tools/fixed_cost_probe.lua): default, without the
  # flush, without the hold, 1, 2 and 4 empty launches; then the Vulkan suite's T = 1 points for their fixed_us
  fixed_probes
  [[ ${FIXED_SUITE:-1} == 1 ]] && run fixed_suite_vulkan timeout 400 $G --backend vulkan experiments/linear_suite.lua \
    --suite all --vendor off --json "$LOGS/fixed_suite_vulkan.jsonl"
  [[ ${FIXED_SUITE:-1} == 1 ]] && grep -E "fixed cost|T=1 " "$LOGS/fixed_suite_vulkan.log" | head -20
}

phase_gemv_next() { # the cold sample's fixed cost (short probes), then the first A/Bs of the x-once-per-call
  # and SW_OUT variants, in one call (one startup), most wanted first
  FIXED_SUITE=${FIXED_SUITE:-0} phase_fixed
  XPRE_FORMATS=${XPRE_FORMATS:-q4_k q8_0} XPRE_RUNS=${XPRE_RUNS:-forward:200:8 reverse:200:8} phase_xpre
  VKXPRE_TEST=${VKXPRE_TEST:-0} VKXPRE_FORMATS=${VKXPRE_FORMATS:-q4_k q4_0} \
    VKXPRE_RUNS=${VKXPRE_RUNS:-forward:200:8 reverse:200:8} phase_vkxpre
  VKSW_SHAPES=${VKSW_SHAPES:-13824,5120} phase_vkswiglu_out
}

case $phase in
check)
  $G --list-devices | tee "$LOGS/devices.txt"
  run c_cuda_backend $BIN/test_cuda_backend
  run c_vulkan_backend $BIN/test_vulkan_backend
  run c_vulkan_batch $BIN/test_vulkan_batch
  for t in tests/lua/test_*.lua; do
    n=$(basename "$t" .lua)
    run "lua_$n" $G "$t"
  done
  run lua_test_gemv_vulkan_nv $G --backend vulkan tests/lua/test_gemv_vulkan.lua
  run lua_test_gemv_vulkan_kquant_nv $G --backend vulkan tests/lua/test_gemv_vulkan_kquant.lua
  run lua_test_gemv_vulkan_xpre_nv $G --backend vulkan tests/lua/test_gemv_vulkan_xpre.lua
  run cli_cuda_fault bash tests/cli/test_cuda_fault.sh $G
  run cli_bad_inputs_nv env GPUBENCH_BACKEND=vulkan bash tests/cli/test_bad_inputs.sh $G
  ;;
sanitize_new)
  # the sanitizers over the kernels with new shared-memory reductions only (the int8 q4_k GEMV's k slices,
  # the SwiGLU fused kernel's KSPLIT): their GPU tests, filtered
  for tool in racecheck memcheck; do
    [[ -n ${SAN_SWIGLU_ONLY:-} ]] || GPUBENCH_TEST_ONLY="int8 tensor-core q4_k kernel matches" run "san_${tool}_i8" \
      timeout ${SAN_LIMIT:-60} "$SAN" --tool $tool --report-api-errors no --error-exitcode 9 $G tests/lua/test_gemv_cuda_i8.lua
    GPUBENCH_TEST_ONLY=${SAN_SWIGLU_ONLY:-other geometries} run "san_${tool}_swiglu" timeout ${SAN_LIMIT:-60} "$SAN" \
      --tool $tool --report-api-errors no --error-exitcode 9 $G tests/lua/test_swiglu_cuda.lua
  done
  ;;
sanitize)
  for tool in memcheck racecheck; do
    run "san_${tool}_c" timeout 240 "$SAN" --tool $tool --report-api-errors no --error-exitcode 9 $BIN/test_cuda_backend
    # the CUDA GEMV tests, one file per kernel family: san_<tool>_gemv, _gemv_tokens, _gemv_i8, _gemv_tc
    for part in "" _tokens _i8 _tc; do
      run "san_${tool}_gemv$part" timeout 300 "$SAN" --tool $tool --report-api-errors no --error-exitcode 9 \
        $G tests/lua/test_gemv_cuda$part.lua
    done
  done
  ;;
flush)
  for f in write clean; do
    run "cold_$f" env M=14336 K=5120 $G --backend cuda experiments/gemv_table.lua --method cold --flush $f \
      --json "$LOGS/cold_$f.jsonl"
    cat "$LOGS/cold_$f.log"
  done
  run crosscheck env M=14336 K=5120 JSON="$LOGS/crosscheck.jsonl" NCU="$NCU" GPUBENCH=$G \
    bash tools/ncu_crosscheck.sh experiments/gemv_table.lua --backend cuda --flush clean
  cat "$LOGS/crosscheck.log"
  # What ncu counts for a call that does nothing: an empty kernel, with ncu's
  # flush and with none (the baseline of the DRAM bytes below)
  for cc in all none; do
    run "empty_$cc" "$NCU" --profile-from-start off --cache-control $cc --clock-control none \
      --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum --csv --print-units base \
      $G -e 'local d = require "gpu".open{backend = "cuda"}; local k = require "gpubench.kernels".load(d, "empty")
        local o = d:buffer(16); d:flush_l2(); d:flush_l2(); d:profiler_start("empty"); k:launch(1, 1, o, 0)
        d:sync(); d:profiler_stop()'
    grep -E 'dram__|gpu__time' "$LOGS/empty_$cc.log"
  done
  # DRAM bytes a flushed call writes: ncu leaves the caches as gpubench's flush left them
  for f in write clean; do
    run "dirty_$f" env M=14336 K=5120 "$NCU" --profile-from-start off --cache-control none --clock-control none \
      --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum --csv --print-units base \
      $G experiments/gemv_table.lua --backend cuda --kernels q4_k,q8_0,bf16 --flush $f --profile "q4_k custom"
    grep -E 'dram__|gpu__time' "$LOGS/dirty_$f.log"
  done
  ;;
probe)
  run flush_probe "$NCU" --profile-from-start off --cache-control none --clock-control none \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum --csv --print-units base \
    $G tools/flush_probe.lua
  grep -E 'profiled:|dram__bytes_write|gpu__time' "$LOGS/flush_probe.log" | sed -E 's/.*"([a-z_]+__[a-z_.]+)","[a-z]+","([0-9,]+)"/\1 \2/'
  ;;
stopping)
  for i in 1 2 3; do
    run "stop_$i" env M=14336 K=5120 $G --backend cuda experiments/gemv_table.lua --kernels q4_k,bf16 --method cold \
      --max-noise ${MAX_NOISE:-0.25} --max-time 5 --json "$LOGS/stop_$i.jsonl"
    grep -E '^(q4_k|bf16)' "$LOGS/stop_$i.log"
  done
  ;;
bandwidth)
  for b in cuda vulkan; do
    run "bandwidth_$b" $G --backend $b experiments/bandwidth.lua --sizes 256M,1G,2G --validate \
      --refresh-ceiling --json "$LOGS/bandwidth_$b.jsonl"
    cat "$LOGS/bandwidth_$b.log"
  done
  ;;
tables)
  for b in ${arg2:-cuda vulkan}; do
    for o in forward reverse; do
      run "gemv_${b}_$o" $G --backend $b experiments/gemv_table.lua --order $o \
        --markdown "$LOGS/gemv_${b}_$o.md" --json "$LOGS/gemv_${b}_$o.jsonl"
      run "gemv_${b}_rot_$o" $G --backend $b experiments/gemv_table.lua --rotate --order $o \
        --markdown "$LOGS/gemv_${b}_rot_$o.md" --json "$LOGS/gemv_${b}_rot_$o.jsonl"
    done
    run "gemv_${b}_14336x5120_rot" env M=14336 K=5120 $G --backend $b experiments/gemv_table.lua \
      --rotate --validate --markdown "$LOGS/gemv_${b}_14336x5120_rot.md" \
      --json "$LOGS/gemv_${b}_14336x5120_rot.jsonl"
  done
  ;;
compare)
  # The same commands through this build and an earlier one (DIR: a tree with
  # its own build-dist/, run from there so it uses its own lib/ and
  # experiments/), in the order new, old, old, new per experiment, on the
  # backend named third (default cuda), for cell-by-cell agreement.
  old=${arg2:?compare needs the earlier tree}
  b=${3:-cuda}
  one() { # one WHO NAME ENV... -- ARGS...
    local who=$1 name=$2; shift 2
    local envs=()
    while [[ $1 != -- ]]; do envs+=("$1"); shift; done
    shift
    local dir=$PWD
    [[ $who == old ]] && dir=$old
    run "cmp_${name}_${b}_$who$SECONDS" env -C "$dir" "${envs[@]}" "$dir/$BIN/gpubench" --backend $b "$@" \
      --json "$LOGS/cmp_${name}_${b}_$who$SECONDS.jsonl"
  }
  for who in new old; do one $who gemv -- experiments/gemv_table.lua; done
  for who in old new; do one $who rot M=14336 K=5120 -- experiments/gemv_table.lua --rotate; done
  for who in new old; do one $who bw -- experiments/bandwidth.lua; done
  ;;
kernels)
  run c_vendor_gemm $BIN/test_vendor_gemm
  for t in linear_cuda vendor_gemm moe_cuda swiglu_cuda linear_vulkan moe_vulkan swiglu_vulkan; do
    run "lua_test_$t" timeout 400 $G tests/lua/test_$t.lua
  done
  ;;
linear)
  for b in ${arg2:-cuda vulkan}; do
    run "linear_all_$b" timeout 500 $G --backend $b experiments/linear_suite.lua --suite all \
      --json "$LOGS/linear_all_$b.jsonl" --markdown "$LOGS/linear_all_$b.md"
    [[ ${LINEAR_EXTRA:-1} == 1 ]] || continue
    run "linear_sweep_q4_$b" $G --backend $b experiments/linear_suite.lua --qtype q4 --n 4096 --k 5120 \
      --sweep 1:32:1 --json "$LOGS/linear_sweep_q4_$b.jsonl"
  done
  [[ ${LINEAR_EXTRA:-1} == 1 ]] || exit $status
  # DRAM bytes of one cold call against the model's (ninfer: 14848 extra bytes)
  run linear_ncu "$NCU" --profile-from-start off --cache-control none --clock-control none \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum --csv --print-units base \
    $G --backend cuda experiments/linear_suite.lua --qtype bf16 --n 14336 --k 5120 --t 1 --profile
  grep -E 'dram__|gpu__time' "$LOGS/linear_ncu.log"
  ;;
moe)
  for b in ${arg2:-cuda vulkan}; do
    for c in ${MOE_CONFIGS:-qwen3_30b_a3b mixtral_8x7b ferrum_subset}; do
      run "moe_${c}_$b" timeout ${MOE_LIMIT:-500} $G --backend $b experiments/moe_scaling.lua --config $c --regime both \
        --projection both ${MOE_ARGS:-} --json "$LOGS/moe_${c}_$b.jsonl"
      grep -E 'grouped' "$LOGS/moe_${c}_$b.log" | head -30
    done
  done
  ;;
swiglu)
  # SHARD=i/n runs one shard (merge the JSON lines with tools/merge_results.lua); SWIGLU_LIMIT caps each run
  for b in ${arg2:-cuda vulkan}; do
    tag=$b${SHARD:+_${SHARD%/*}of${SHARD#*/}}
    run "swiglu_$tag" timeout ${SWIGLU_LIMIT:-580} $G --backend $b experiments/swiglu_ab.lua --rounds 1 \
      ${SHARD:+--shard $SHARD} --output "$LOGS/swiglu_$tag.json" --markdown-output "$LOGS/swiglu_$tag.md" \
      --json "$LOGS/swiglu_$tag.jsonl"
    tail -40 "$LOGS/swiglu_$tag.log"
  done
  ;;
tune)
  V="$G --backend cuda experiments/linear_variants.lua"
  # (the staged route against the direct one: the stage phase)
  run tune_q4_gemv timeout 150 $V --qtype q4 --n 131072 --k 5120 --t 1,8 --grid "LN_NW=2,4,8;LN_U=2,4,8" \
    --json "$LOGS/tune_q4_gemv.jsonl"
  run tune_bf16_gemv timeout 100 $V --qtype bf16 --n 14336 --k 5120 --t 1 --grid "LN_NW=2,4,8;LN_RT=1,2;LN_U=2,4" \
    --json "$LOGS/tune_bf16_gemv.jsonl"
  run tune_q6_gemv timeout 80 $V --qtype q6 --n 248320 --k 5120 --t 1 --grid "LN_NW=4,8;LN_U=2,4" \
    --json "$LOGS/tune_q6_gemv.jsonl"
  run tune_w8_mma timeout 80 $V --qtype w8 --n 6144 --k 5120 --t 128 --route mma --grid "LN_NW=2,4,8;LN_STAGES=2,4" \
    --json "$LOGS/tune_w8_mma.jsonl"
  run tune_q4_mma timeout 100 $V --qtype q4 --n 131072 --k 5120 --t 1024 --route mma \
    --grid "LN_NW=4,8;LN_BN=64,128;LN_STAGES=2,3" --json "$LOGS/tune_q4_mma.jsonl"
  for pt in "q4 131072 1" "bf16 14336 1" "q4 131072 1024"; do
    set -- $pt
    run "ncu_$1_$2_$3" timeout 90 "$NCU" --profile-from-start off --cache-control none --clock-control none \
      --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy \
      --section LaunchStats --section SchedulerStats --section ComputeWorkloadAnalysis \
      $G --backend cuda experiments/linear_suite.lua --qtype $1 --n $2 --k 5120 --t $3 --profile
  done
  for f in "$LOGS"/tune_*.log; do cat "$f"; done
  ;;
wgclose)
  # The wgmma route's two ways of closing its pipeline (LN_CLOSE, docs/kernels/cuda-linear.md, "Closing the
  # pipeline"): the GPU test, where ptxas put each closing's warpgroup waits (SASS), then LN_CLOSE = 0 against 1
  # at large-T points of four formats (linear_variants: every variant checked against FP64 first, ABBA)
  GPUBENCH_TEST_ONLY="pipeline closed" run lua_test_wgclose timeout 300 $G tests/lua/test_linear_cuda.lua
  for q in q4 bf16 nvfp4; do
    for c in 0 1; do
      ws=0; wpf=2; [[ $q == nvfp4 ]] && ws=1; [[ $q == q4 ]] && wpf=4
      /usr/local/cuda/bin/nvcc -std=c++17 -arch=sm_90a -cubin -Ikernels/cuda -DGB_ARCH_SPECIFIC=1 -DLN_WG=2 -DLN_MT=1 \
        -DLN_BN=256 -DLN_STAGES=4 -DLN_WPF=$wpf -DLN_WS=$ws -DLN_KSPLIT=1 -DLN_CLOSE=$c -DLN_STAGGER=0 -DLN_HALF=0 -DLN_XCOPY=0 -o "$LOGS/wg_${q}_c$c.cubin" \
        kernels/cuda/linear_wgmma_$q.cu > "$LOGS/wg_${q}_c$c.ptxas" 2>&1
      /usr/local/cuda/bin/cuobjdump -sass "$LOGS/wg_${q}_c$c.cubin" > "$LOGS/wg_${q}_c$c.sass" 2>&1
      echo "$q LN_CLOSE=$c: $(grep -c 'WARPGROUP.DEPBAR' "$LOGS/wg_${q}_c$c.sass") WARPGROUP.DEPBAR," \
        "$(grep -c 'HGMMA' "$LOGS/wg_${q}_c$c.sass") HGMMA"
    done
  done
  # LN_CLOSE = 0 takes warpgroups in step (LN_STAGGER = 0), so both closings are timed without the stagger
  V="$G --backend cuda experiments/linear_variants.lua --route wgmma --grid LN_CLOSE=0,1;LN_STAGGER=0"
  run wgclose_q4 timeout 200 $V --qtype q4 --n 131072 --k 5120 --t 1024,256 --json "$LOGS/wgclose_q4.jsonl"
  run wgclose_bf16 timeout 120 $V --qtype bf16 --n 14336 --k 5120 --t 1024,256 --json "$LOGS/wgclose_bf16.jsonl"
  run wgclose_nvfp4 timeout 120 $V --qtype nvfp4 --n 14336 --k 5120 --t 1024 --json "$LOGS/wgclose_nvfp4.jsonl"
  run wgclose_w8 timeout 120 $V --qtype w8 --n 17408 --k 5120 --t 1024 --json "$LOGS/wgclose_w8.jsonl"
  for f in "$LOGS"/wgclose_*.log; do cat "$f"; done
  ;;
stagger)
  # The wgmma route's staggered warpgroups (LN_STAGGER) and the other lockstep choices, ABBA, each variant checked
  # against FP64 first (docs/kernels/cuda-linear.md, "Staggered warpgroups"; the phase was `splitload` with the
  # loads' A/B first, "Loads that waited", whose switch is gone)
  V="$G --backend cuda experiments/linear_variants.lua --route wgmma"
  run stagger_q4 timeout 150 $V --grid "LN_STAGGER=0,1;LN_WPF=2,4" --qtype q4 --n 131072 --k 5120 --t 1024,256 \
    --json "$LOGS/stagger_q4.jsonl"
  run stagger_ws_q4 timeout 100 $V --grid "LN_WS=1" --qtype q4 --n 131072 --k 5120 --t 1024 --json "$LOGS/stagger_ws_q4.jsonl"
  for p in w8:17408:5120 q6:248320:2048 bf16:14336:5120 q5:6144:5120 nvfp4:14336:5120; do
    IFS=: read -r q n k <<< "$p"
    run stagger_$q timeout 100 $V --grid "LN_STAGGER=0,1" --qtype $q --n $n --k $k --t 1024 --json "$LOGS/stagger_$q.jsonl"
  done
  for f in "$LOGS"/stagger_*.log; do grep -E '^ *[0-9]+ ' "$f" | sed "s|^|$(basename $f .log) |"; done
  GPUBENCH_TEST_ONLY="wgmma route" run lua_test_wgmma timeout 200 $G tests/lua/test_linear_cuda.lua
  ;;
half)
  # LN_HALF (weights decoded to fp16 with their scales, x in fp16 from a prepass; docs/kernels/cuda-linear.md,
  # "Weights in fp16") against the table's bf16 codes with the scales after the sum, staggered or not, ABBA, every
  # variant checked against FP64 first (HALF=${HALF_PTS} overrides the points, q:N:K:T,T)
  V="$G --backend cuda experiments/linear_variants.lua --route wgmma --grid LN_HALF=0,1;LN_STAGGER=0,1"
  for p in ${HALF_PTS:-q4:131072:5120:1024,256 w8:17408:5120:1024 q6:248320:2048:1024 q5:6144:5120:1024 w8:34816:5120:1024}; do
    IFS=: read -r q n k ts <<< "$p"
    run "half_${q}_$n" timeout 170 $V --qtype $q --n $n --k $k --t $ts --json "$LOGS/half_${q}_$n.jsonl"
  done
  for f in "$LOGS"/half_*.log; do grep -E '^ *[0-9]+ |LN_HALF' "$f" | sed "s|^|$(basename $f .log) |"; done
  ;;
half_check)
  # The table with LN_HALF: the GPU tests of the wgmma route (every variant against FP64), then the suite twice
  # (the second with the kernel cache warm)
  GPUBENCH_TEST_ONLY="wgmma route" run lua_test_wgmma timeout 300 $G tests/lua/test_linear_cuda.lua
  grep -E "^(ok|FAIL|SKIP)|passed" "$LOGS/lua_test_wgmma.log" | cut -c1-200
  for r in 1 2; do
    run "linear_all_cuda_r$r" timeout 240 $G --backend cuda experiments/linear_suite.lua --suite all \
      --json "$LOGS/linear_all_cuda_r$r.jsonl" --markdown "$LOGS/linear_all_cuda_r$r.md"
    grep -E "wall|checks" "$LOGS/linear_all_cuda_r$r.log" | tail -3
  done
  ;;
half_rule)
  # Where LN_HALF pays: the sliced and small-grid points of the suite, ABBA, each variant FP64-checked (geometry
  # as the table's grid rule picks it: LN_BN and LN_KSPLIT given), then the suite twice
  V="$G --backend cuda experiments/linear_variants.lua --route wgmma"
  for p in q6:1152:1536:1024:256:4 q5:1152:4304:1024:256:8 q4:3456:1152:1024:256:1 q4:3456:1152:128:128:4 \
           w8:2048:4096:128:128:16 w8:2048:4096:1024:256:4 w8:5120:17408:1024:256:4 q4:131072:2048:1024:256:1; do
    IFS=: read -r q n k tt bn ks <<< "$p"
    run "hrule_${q}_${n}_${k}_$tt" timeout 120 $V --grid "LN_HALF=0,1;LN_STAGGER=0,1;LN_BN=$bn;LN_KSPLIT=$ks" \
      --qtype $q --n $n --k $k --t $tt --json "$LOGS/hrule_${q}_${n}_${k}_$tt.jsonl"
  done
  for f in "$LOGS"/hrule_*.log; do grep -E '^ *[0-9]+ ' "$f" | sed "s|^|$(basename $f .log) |"; done
  for r in 1 2; do
    run "linear_all_cuda_r$r" timeout 240 $G --backend cuda experiments/linear_suite.lua --suite all \
      --json "$LOGS/linear_all_cuda_r$r.jsonl" --markdown "$LOGS/linear_all_cuda_r$r.md"
  done
  ;;
xcopy)
  # x's copies from addresses set once per thread (LN_XCOPY; docs/kernels/cuda-linear.md, "Copies of x") against
  # the table's per-copy arithmetic, ABBA, every variant checked against FP64 first; T = 1024 and 256 at the large
  # points of every format, then the same at a sliced point (XCOPY_PTS="q:N:K:T,T ..." overrides)
  V="$G --backend cuda experiments/linear_variants.lua --route wgmma --grid LN_XCOPY=0,1"
  for p in ${XCOPY_PTS:-q4:131072:5120:1024,256 q6:248320:2048:1024 w8:34816:5120:1024,256 q5:6144:5120:1024 \
           nvfp4:14336:5120:1024 bf16:14336:5120:1024,256}; do
    IFS=: read -r q n k ts <<< "$p"
    run "xcopy_${q}_$n" timeout 150 $V --qtype $q --n $n --k $k --t $ts --json "$LOGS/xcopy_${q}_$n.jsonl"
  done
  for f in "$LOGS"/xcopy_*.log; do grep -E '^ *[0-9]+ ' "$f" | sed "s|^|$(basename $f .log) |"; done
  ;;
wgnext)
  # The two A/Bs the 2026-12-05 session could not run, in one call: LN_XCOPY, then LN_HALF's rule at the small
  # points and the suite twice (half_rule)
  bash "$0" xcopy
  bash "$0" half_rule
  ;;
wgncu)
  # ncu's full set over one cold call of the wgmma route at T = 1024 (WGNCU="q:N:K ..."): the details page and
  # the per-instruction SASS page (stall samples per instruction), gzipped
  for p in ${WGNCU:-q4:131072:5120 w8:17408:5120 bf16:14336:5120}; do
    IFS=: read -r q n k <<< "$p"
    run "wgncu_$q" "$NCU" --profile-from-start off --cache-control none --clock-control none --set full \
      --import-source no -o "/tmp/wgncu_$q" -f $G --backend cuda experiments/linear_suite.lua --qtype $q --n $n --k $k \
      --t 1024 --profile
    "$NCU" -i "/tmp/wgncu_$q.ncu-rep" --page details --print-details all > "$LOGS/wgncu_${q}_details.txt" 2>&1
    "$NCU" -i "/tmp/wgncu_$q.ncu-rep" --page source --csv --print-source sass 2>&1 | gzip > "$LOGS/wgncu_${q}_sass.csv.gz"
    grep -E "^ *(Duration|Issue Slots Busy|No Eligible|Eligible Warps|Compute \(SM\) Throughput|Registers Per)" \
      "$LOGS/wgncu_${q}_details.txt" | sed "s|^|$q |"
  done
  ;;
stage)
  # The staged memory-bound Linear route (LN_STAGE) against the direct one, ABBA, at T = 1 and 8
  V="$G --backend cuda experiments/linear_variants.lua"
  run stage_q4 timeout 100 $V --qtype q4 --n 131072 --k 5120 --t 1,8 --grid "LN_STAGE=0,3" --json "$LOGS/stage_q4.jsonl"
  run stage_q6 timeout 100 $V --qtype q6 --n 248320 --k 5120 --t 1,8 --grid "LN_STAGE=0,3" --json "$LOGS/stage_q6.jsonl"
  run stage_q5 timeout 100 $V --qtype q5 --n 131072 --k 5120 --t 1,8 --grid "LN_STAGE=0,3;LN_U=2,4" \
    --json "$LOGS/stage_q5.jsonl"
  run stage_w8 timeout 80 $V --qtype w8 --n 34816 --k 5120 --t 1,8 --grid "LN_STAGE=0,3;LN_U=2,4" \
    --json "$LOGS/stage_w8.jsonl"
  run stage_nvfp4 timeout 100 $V --qtype nvfp4 --n 131072 --k 5120 --t 1,8 --grid "LN_STAGE=0,3;LN_U=2,4" \
    --json "$LOGS/stage_nvfp4.jsonl"
  run stage_bf16 timeout 80 $V --qtype bf16 --n 14336 --k 5120 --t 1,8 --grid "LN_STAGE=0,3;LN_U=1,2" \
    --json "$LOGS/stage_bf16.jsonl"
  for f in "$LOGS"/stage_*.log; do cat "$f"; done
  ;;
data)
  # Does the data in the weights change the read speed? (tools/data_probe.lua)
  for nk in "11008 4096" "6912 1536"; do
    run "data_${nk% *}" timeout 150 $G --backend cuda tools/data_probe.lua $nk
    cat "$LOGS/data_${nk% *}.log"
  done
  ;;
dense_tc)
  # the dense tensor-core GEMV (MMA=1): its GPU test, the FMA kernel's default at each T, then the tensor-core
  # geometries (DTC_GRID_T<T> overrides one T's grid) in DTC_ORDER; with DTC_ONLY=1 nothing else
  GPUBENCH_TEST_ONLY="dense tensor-core" run lua_test_gemv_tc timeout 240 $G tests/lua/test_gemv_cuda_tc.lua
  V="$G --backend cuda experiments/gemv_variants.lua --rotate --rounds 1 --order ${DTC_ORDER:-forward}"
  for tk in ${DTC_TOKENS:-8 4 2}; do
    run "dtc_fma_T${tk}" timeout 60 env M=14336 K=5120 $V --kernels ${DTC_KERNELS:-bf16,f16} --grid "GEMV_TOKENS=$tk" \
      --json "$LOGS/dtc_fma_T$tk.jsonl"
    grid="GEMV_TOKENS=$tk;MMA=1;WARPS=1,2;KSPLIT=2,4,8;UNROLL=2,4;STAGES=2,3"
    [[ $tk -lt 8 ]] && grid="GEMV_TOKENS=$tk;MMA=1;WARPS=1;KSPLIT=2,4,8;UNROLL=2,4;STAGES=2,3"
    v=DTC_GRID_T$tk; grid=${!v:-$grid}
    run "dtc_T${tk}" timeout 200 env M=14336 K=5120 $V --kernels ${DTC_KERNELS:-bf16,f16} --grid "$grid" \
      --json "$LOGS/dtc_T$tk.jsonl"
  done
  [[ ${DTC_ONLY:-0} == 1 ]] && exit $status
  run vk_dense_T8 timeout 150 env M=14336 K=5120 $G --backend vulkan experiments/gemv_variants.lua --rotate --rounds 1 \
    --kernels f32,bf16 --grid "${VK_DENSE_GRID:-GEMV_TOKENS=8;GEMV_T=4,8,16;GEMV_NR=4,8}" --json "$LOGS/vk_dense_T8.jsonl"
  for f in "$LOGS"/dtc_*.log "$LOGS"/vk_dense_*.log; do [[ -f $f ]] && grep -vE '^gemv_variants: ' "$f"; done
  ;;
tokens_tune)
  tk=${arg2:-8}
  V="$G --backend cuda experiments/gemv_variants.lua --rotate --rounds 1"
  run "ttune_quant_T$tk" timeout 240 env M=14336 K=5120 $V --kernels q4_0,q8_0,q4_k,q5_k,q6_k \
    --grid "GEMV_TOKENS=$tk;MMA=0,1;XQ=0,1;STAGES=2,3" --json "$LOGS/ttune_quant_T$tk.jsonl"
  # the int8 tensor-core q4_k kernel (I8=1) against the integer dot, both orders
  for o in forward reverse; do
    run "ttune_i8_T${tk}_$o" timeout 120 env M=14336 K=5120 $V --kernels q4_k --order $o \
      --grid "GEMV_TOKENS=$tk;I8=0,1;WARPS=1,2,4" --json "$LOGS/ttune_i8_T${tk}_$o.jsonl"
  done
  run "ttune_dense_T$tk" timeout 120 env M=14336 K=5120 $V --kernels bf16,f32 \
    --grid "GEMV_TOKENS=$tk;ROWS=1,2,4;WARPS=2,4;UNROLL=1,2" --json "$LOGS/ttune_dense_T$tk.jsonl"
  for f in "$LOGS"/ttune_*.log; do grep -vE '^gemv_variants: ' "$f"; done
  ;;
i8)
  GPUBENCH_TEST_ONLY="int8 tensor-core" run lua_test_gemv_i8 timeout 200 $G tests/lua/test_gemv_cuda_i8.lua
  V="$G --backend cuda experiments/gemv_variants.lua --rotate --rounds 1 --kernels q4_k"
  run i8_default timeout 60 env M=14336 K=5120 $V --grid "GEMV_TOKENS=2,4,8" --json "$LOGS/i8_default.jsonl"
  grep -E '^q4_k' "$LOGS/i8_default.log"
  # where the int8 kernel starts to win (gemv_cuda's TOKEN_RULES): T = 4..8, the entry's kernel (A) and the
  # int8 one (B) in the order A B B A, each run in the order its position says
  for ab in xq:forward i8:forward i8:reverse xq:reverse; do
    IFS=: read -r kind o <<< "$ab"
    grid="GEMV_TOKENS=4,5,6,7,8"; [[ $kind == i8 ]] && grid="$grid;I8=1;WARPS=4;KSPLIT=2"
    run "i8_cross_${kind}_$o" timeout 90 env M=14336 K=5120 $V --order $o --grid "$grid" --json "$LOGS/i8_cross_${kind}_$o.jsonl"
    grep -E '^q4_k' "$LOGS/i8_cross_${kind}_$o.log"
  done
  [[ ${I8_CROSS_ONLY:-0} == 1 ]] && exit $status
  # k slices and prefetch at T = 8 in both orders and a second ITERS, then T = 4
  for oi in forward:200:8 reverse:200:8 forward:600:8 forward:200:4; do
    IFS=: read -r o it tk <<< "$oi"
    run "i8_${o}_${it}_T$tk" timeout 150 env M=14336 K=5120 ITERS=$it $V --order $o \
      --grid "GEMV_TOKENS=$tk;I8=1;WARPS=2,4;KSPLIT=1,2,4,8;PREFETCH=0,1" --json "$LOGS/i8_${o}_${it}_T$tk.jsonl"
    grep -E '^q4_k' "$LOGS/i8_${o}_${it}_T$tk.log"
  done
  ;;
q8tc)
  f=${QTC_FORMAT:-q8_0} # q8_0 or q4_0
  [[ ${Q8TC_TEST:-1} == 1 ]] && GPUBENCH_TEST_ONLY="f16 tensor-core $f" run lua_test_gemv_q8tc timeout 200 $G tests/lua/test_gemv_cuda_tc.lua
  [[ ${Q8TC_TEST:-1} == 1 ]] && tail -1 "$LOGS/lua_test_gemv_q8tc.log"
  V="$G --backend cuda experiments/gemv_variants.lua --rotate --rounds 1 --kernels $f"
  # one process per run: the int8 kernel (the entry's from T = 4) and the integer dot, then the tensor-core
  # geometries (Q8TC_GRID: more grids, '|'-separated)
  for oit in ${Q8TC_RUNS:-forward:200:8 reverse:200:8 forward:600:8 forward:200:4 reverse:200:4 forward:200:2 forward:200:1}; do
    IFS=: read -r o it tk <<< "$oit"
    g="GEMV_TOKENS=$tk;I8=1;WARPS=4;KSPLIT=2|GEMV_TOKENS=$tk;I8=0"
    for tc in ${Q8TC_GRID:-"KSPLIT=2,4;TILES=1;UNROLL=4;STAGES=2,3;INTERLEAVE=1,4" "KSPLIT=2;TILES=2;UNROLL=4;STAGES=2;INTERLEAVE=1,2" \
        "WARPS=2;KSPLIT=2;TILES=1;UNROLL=4;STAGES=2;INTERLEAVE=1,4" "WARPS=4;KSPLIT=4;TILES=2;UNROLL=2;STAGES=0"}; do
      g="$g|GEMV_TOKENS=$tk;TC=1;$tc"
    done
    n="${f/q8_0/q8}tc_${o}_${it}_T$tk"
    run "$n" timeout ${Q8TC_LIMIT:-100} env M=14336 K=5120 ITERS=$it $V --order $o --grid "$g" --json "$LOGS/$n.jsonl"
    grep -E "^$f" "$LOGS/$n.log" | grep -v invalid
  done
  S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy
     --section LaunchStats --section SchedulerStats --section ComputeWorkloadAnalysis"
  [[ ${Q8TC_NCU-x} == "" ]] && exit $status
  for cell in "${Q8TC_NCU:-GEMV_TOKENS=8 TC=1 KSPLIT=2 TILES=1 UNROLL=4 STAGES=2 INTERLEAVE=2}"; do
    run ncu_q8tc timeout 90 "$NCU" --cache-control none --clock-control none $S --profile-from-start off \
      env M=14336 K=5120 $V --grid "${cell// /;}" --profile "$f $cell"
    grep -E 'Duration|DRAM Throughput|Achieved Occupancy|Registers Per|Issue Slots Busy|No Eligible|Stall|L1/TEX Hit|Eligible Warps|Mem Pipes|L1/TEX Cache Throughput|Executed Ipc A|Warp Cycles Per Issued|Block Limit' \
      "$LOGS/ncu_q8tc.log" | head -30
  done
  ;;
fixed)
  phase_fixed
  ;;
gemv_next)
  phase_gemv_next
  ;;
xpre)
  phase_xpre
  ;;
vkxpre)
  phase_vkxpre
  ;;
vkcoop)
  phase_vkcoop
  ;;
xpre_geo)
  phase_xpre_geo
  ;;
xfrag)
  phase_xfrag
  ;;
guard)
  phase_guard
  ;;
staged)
  phase_staged
  ;;
next17)
  phase_next17
  ;;
picks)
  phase_picks
  ;;
next18)
  phase_next18
  ;;
i8ab)
  # an int8 tensor-core kernel (I8=1) against the integer dot in one process per run (docs/kernels/cuda-gemv.md,
  # "q5_k on the int8 path"): its oracle test first (I8AB_TEST=0 skips), then ORDER:ITERS:T runs at 14336 x 5120
  f=${I8AB_FORMAT:-q5_k}
  [[ ${I8AB_TEST:-1} == 1 ]] && GPUBENCH_TEST_ONLY="int8 tensor-core $f" run lua_test_gemv_i8_$f timeout 200 $G tests/lua/test_gemv_cuda_i8.lua
  [[ ${I8AB_TEST:-1} == 1 ]] && tail -1 "$LOGS/lua_test_gemv_i8_$f.log"
  for oit in ${I8AB_RUNS:-forward:200:8 reverse:200:8 forward:600:8 forward:200:5 reverse:200:5 forward:200:4 reverse:200:4 forward:200:3}; do
    IFS=: read -r o it tk <<< "$oit"
    g="GEMV_TOKENS=$tk;I8=0|GEMV_TOKENS=$tk;I8=1;WARPS=4;KSPLIT=1,2,4|GEMV_TOKENS=$tk;I8=1;WARPS=2,8;KSPLIT=2|GEMV_TOKENS=$tk;I8=1;WARPS=4;KSPLIT=2;PREFETCH=1"
    n="i8ab_${f}_${o}_${it}_T$tk"
    run "$n" timeout 100 env M=14336 K=5120 ITERS=$it $G --backend cuda experiments/gemv_variants.lua --rotate --rounds 1 \
      --kernels $f --order $o --grid "$g" --json "$LOGS/$n.jsonl"
    grep -E "^$f" "$LOGS/$n.log" | grep -v invalid
  done
  ;;
dynsmem)
  # Dynamic shared memory (stages past the static 48 KiB): the backend's test, the GPU tests of the
  # kernels' dynamic geometries (the dense one's with DYN_DENSE_TEST=1: 128 compiles; gemv_variants checks every
  # variant it times against FP64 anyway), then the geometry space it opens, in-process A B B A: q8_0 TC and
  # bf16 TC at T = 8 (DYN_RUNS "order:iters ..."), the SwiGLU fused kernel at LLaMA-2-7B and 13B
  # (one process per geometry, cuBLAS beside it in each; DYN_SW=0 skips)
  [[ ${DYN_TESTS:-1} == 1 ]] && run test_cuda_backend timeout 120 $BIN/test_cuda_backend
  [[ ${DYN_TESTS:-1} == 1 ]] && GPUBENCH_TEST_ONLY="f16 tensor-core" run lua_qtc timeout 300 $G tests/lua/test_gemv_cuda_tc.lua
  [[ ${DYN_DENSE_TEST:-0} == 1 ]] &&
    GPUBENCH_TEST_ONLY="dense tensor-core kernels match" run lua_dense_tc timeout 300 $G tests/lua/test_gemv_cuda_tc.lua
  [[ ${DYN_TESTS:-1} == 1 ]] && GPUBENCH_TEST_ONLY="staged geometries" run lua_swiglu_staged timeout 120 $G tests/lua/test_swiglu_cuda.lua
  V="$G --backend cuda experiments/gemv_variants.lua --rotate --rounds 1"
  for oit in ${DYN_RUNS-forward:200 reverse:200 forward:500}; do
    IFS=: read -r o it <<< "$oit"
    g="GEMV_TOKENS=8;I8=1;WARPS=4;KSPLIT=2"
    for tc in ${DYN_Q8_GRID:-"WARPS=1;KSPLIT=2,4;TILES=2;UNROLL=4;STAGES=2,3,4;INTERLEAVE=2" \
        "WARPS=2;KSPLIT=2;TILES=2;UNROLL=4;STAGES=2;INTERLEAVE=2" "WARPS=1;KSPLIT=2;TILES=2;UNROLL=8;STAGES=2;INTERLEAVE=2,4"}; do
      g="$g|GEMV_TOKENS=8;TC=1;$tc"
    done
    n="dyn_q8_${o}_${it}"
    run "$n" timeout ${DYN_LIMIT:-110} env M=14336 K=5120 ITERS=$it $V --kernels q8_0 --order $o --grid "$g" --json "$LOGS/$n.jsonl"
    grep -E '^q8_0' "$LOGS/$n.log" | grep -v invalid
    [[ $it == 200 ]] || continue
    g="GEMV_TOKENS=8;I8=1;WARPS=4;KSPLIT=2|GEMV_TOKENS=8;TC=1;WARPS=1;KSPLIT=2,4;TILES=2;UNROLL=4,8;STAGES=2;INTERLEAVE=2"
    g="$g|GEMV_TOKENS=8;TC=1;WARPS=1;KSPLIT=2;TILES=1;UNROLL=8;STAGES=3;INTERLEAVE=4|GEMV_TOKENS=8;TC=1;WARPS=2;KSPLIT=2;TILES=2;UNROLL=4;STAGES=2;INTERLEAVE=2"
    n="dyn_q4_${o}_${it}"
    run "$n" timeout ${DYN_LIMIT:-110} env M=14336 K=5120 ITERS=$it $V --kernels q4_0 --order $o --grid "$g" --json "$LOGS/$n.jsonl"
    grep -E '^q4_0' "$LOGS/$n.log" | grep -v invalid
    g="GEMV_TOKENS=8;MMA=1;WARPS=1;KSPLIT=2,4;TILES=2;UNROLL=4;STAGES=2,3|GEMV_TOKENS=8;MMA=1;WARPS=2;KSPLIT=2;TILES=2;UNROLL=4;STAGES=2"
    g="$g|GEMV_TOKENS=8;MMA=1;WARPS=1;KSPLIT=2;TILES=2;UNROLL=8;STAGES=2"
    n="dyn_bf16_${o}_${it}"
    run "$n" timeout ${DYN_LIMIT:-110} env M=14336 K=5120 ITERS=$it $V --kernels bf16 --order $o --grid "$g" --json "$LOGS/$n.jsonl"
    grep -E '^bf16' "$LOGS/$n.log" | grep -v invalid
  done
  [[ ${DYN_SW:-1} == 0 ]] && exit $status
  # the shape rules (first of each list) and geometries past 48 KiB
  for nkg in "11008,4096:KSPLIT=8,STAGES=2,UNROLL=2 KSPLIT=8,STAGES=3,UNROLL=2 KSPLIT=8,STAGES=2,UNROLL=4 KSPLIT=4,STAGES=3,UNROLL=4" \
      "13824,5120:KSPLIT=4,STAGES=2,UNROLL=4 KSPLIT=4,STAGES=3,UNROLL=4 KSPLIT=8,STAGES=2,UNROLL=4 KSPLIT=4,STAGES=2,UNROLL=8"; do
    nk=${nkg%%:*}
    for geo in ${nkg#*:}; do swgeo "dynsw_${nk%,*}_${geo//[=,]/_}" $nk $geo; done
  done
  ;;
dynab)
  # The dynamic shared memory mechanism itself: the kept tensor-core geometries with their stages static and
  # forced dynamic (DYNAMIC=1), in one process, both orders, T = 8 at 14336 x 5120 rotated
  V="$G --backend cuda experiments/gemv_variants.lua --rotate --rounds 1"
  for o in forward reverse; do
    for fg in "q8_0:TC=1" "q4_0:TC=1" "bf16:MMA=1"; do
      f=${fg%%:*} k=${fg#*:}
      n="dynab_${f}_$o"
      run "$n" timeout 100 env M=14336 K=5120 ITERS=200 $V --kernels $f --order $o \
        --grid "GEMV_TOKENS=8;$k|GEMV_TOKENS=8;$k;DYNAMIC=1" --json "$LOGS/$n.jsonl"
      grep -E "^$f" "$LOGS/$n.log" | grep -v invalid
    done
  done
  ;;
vkidot)
  # Vulkan q8_0 and q4_0 at T > 1: the float kernels (for_device's) against the T-token integer loop, both x
  # layouts, 14336 x 5120 rotated, in one process per order (docs/kernels/vulkan-gemv.md, "q8_0 and q4_0 at T > 1")
  $G tests/lua/test_gemv_vulkan.lua > "$LOGS/vkidot_test.log" 2>&1; tail -1 "$LOGS/vkidot_test.log"
  $G tests/lua/test_gemv_vulkan_kquant.lua > "$LOGS/vkidot_test_t.log" 2>&1; tail -1 "$LOGS/vkidot_test_t.log"
  V="$G --backend vulkan experiments/gemv_variants.lua --rotate --rounds 1 --kernels q8_0,q4_0"
  for o in forward reverse; do
    for T in 8 4 2; do
      n="vkidot_t${T}_$o"
      run "$n" timeout 120 env M=14336 K=5120 ITERS=200 $V --order $o \
        --grid "GEMV_TOKENS=$T;GEMV_IDOT=0,1,2" --json "$LOGS/$n.jsonl"
      grep -E "^q(8|4)_0" "$LOGS/$n.log" | grep -v invalid
    done
  done
  ;;
limits)
  # ncu sections of one call of each issue's slowest kernel: what limits it (docs/kernels)
  S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy
     --section LaunchStats --section SchedulerStats --section ComputeWorkloadAnalysis"
  NC="$NCU --cache-control none --clock-control none $S"
  V="$G --backend cuda experiments/gemv_variants.lua --rotate --rounds 1 --kernels q4_k"
  for cell in "GEMV_TOKENS=8" "GEMV_TOKENS=8 I8=1 WARPS=4 KSPLIT=2 PREFETCH=0"; do
    run "ncu_q4k_${cell//[= ]/_}" timeout 90 $NC --profile-from-start off env M=14336 K=5120 $V \
      --grid "${cell// /;}" --profile "q4_k $cell"
  done
  run ncu_linear_q4_t1 timeout 90 $NC --profile-from-start off \
    $G --backend cuda experiments/linear_suite.lua --qtype q4 --n 131072 --k 5120 --t 1 --profile
  SW="$G --backend cuda experiments/swiglu_ab.lua --shape 13824,5120 --mode eager --regime rotated --trials 1 --rounds 1"
  for mm in 1 8; do
    run "ncu_swiglu_fused_m$mm" timeout 90 $NC -k regex:swiglu_fused -s 30 -c 1 $SW --m-values $mm
    run "ncu_swiglu_vendor_m$mm" timeout 90 $NC -k regex:'gemv|gemm|xmma|cutlass|sm90' -s 30 -c 1 $SW --m-values $mm
  done
  run ncu_moe_grouped_m64 timeout 120 $NC -k regex:grouped -s 30 -c 1 $G --backend cuda experiments/moe_scaling.lua \
    --config qwen3_30b_a3b --m 64 --variants grouped --projection gate_up --regime cold --rounds 1
  for f in "$LOGS"/ncu_*.log; do
    echo "== $f"; grep -E 'Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Issue Slots Busy|No Eligible|Stall|Block Size|Grid Size|Waves Per SM|Eligible Warps|L2 Hit|L1/TEX Hit|Executed Ipc A' "$f" | head -30
  done
  ;;
gemv_sweep)
  # gemv_variants geometry sweeps, rotated, both orders: GSWEEP="FORMAT:GRID ..." (grid ';'-separated) at M=GSWEEP_M
  for cell in ${GSWEEP:-q6_k:ROWS=8,14,16;PARTS=1,2;STAGES=2,3;BULK=0,1 q4_k:ROWS=8,14,16;PARTS=1,2;STAGES=2,3}; do
    f=${cell%%:*} grid=${cell#*:}
    for o in forward reverse; do
      n="gsweep_${f}_${GSWEEP_M:-131072}_$o"
      run "$n" timeout 200 env M=${GSWEEP_M:-131072} K=5120 $G --backend cuda experiments/gemv_variants.lua --rotate \
        --rounds 1 --order $o --kernels $f --grid "$grid" --json "$LOGS/$n.jsonl"
      grep -E "^$f" "$LOGS/$n.log"
    done
  done
  ;;
ks)
  # slices of K (LN_KS) at T = 2 on the dot route's short points; the Linear GPU test first
  run lua_test_linear_cuda timeout 200 $G tests/lua/test_linear_cuda.lua
  tail -3 "$LOGS/lua_test_linear_cuda.log"
  for pt in ${KS_POINTS:-w8:5120:17408 w8:14336:5120 w8:34816:5120 w8:5120:10240 q5:6144:5120 q4:131072:2048}; do
    IFS=: read -r q n k <<< "$pt"
    run "ks_${q}_${n}_$k" timeout 120 $G --backend cuda experiments/linear_variants.lua --qtype $q --n $n --k $k \
      --t ${KS_T:-2} --route dot --grid "LN_KS=1,2,4" --json "$LOGS/ks_${q}_${n}_$k.jsonl"
    grep -vE '^(linear_variants|gpubench):' "$LOGS/ks_${q}_${n}_$k.log" | head -8
  done
  ;;
dot)
  # the Linear integer-dot route: its GPU test, then dot against the memory-bound route (gemv) in one
  # linear_variants run each, A B B A, at the suite's T=1 shapes larger than L2; then the suite
  GPUBENCH_TEST_ONLY=${DOT_TEST_ONLY:-} run lua_test_linear_cuda timeout 200 $G tests/lua/test_linear_cuda.lua
  tail -3 "$LOGS/lua_test_linear_cuda.log"
  V="$G --backend cuda experiments/linear_variants.lua"
  for pt in ${DOT_POINTS:-q4:131072:1 q6:248320:1,2 w8:34816:1,2 q5:131072:1,2}; do
    IFS=: read -r q n ts <<< "$pt"
    for r in dot gemv gemv dot; do
      i=$(( ${i:-0} + 1 ))
      run "dot_${q}_${n}_${i}_$r" timeout 100 $V --qtype $q --n $n --k 5120 --t $ts --route $r --json "$LOGS/dot_${q}_${n}_${i}_$r.jsonl"
      grep -vE '^(linear_variants|gpubench):' "$LOGS/dot_${q}_${n}_${i}_$r.log" | head -8
    done
  done
  run dot_suite timeout 200 $G --backend cuda experiments/linear_suite.lua --suite all --vendor off --json "$LOGS/dot_suite.jsonl"
  grep -E ' 1 +[0-9]' "$LOGS/dot_suite.log" | head -20; tail -4 "$LOGS/dot_suite.log"
  ;;
vkdot)
  # the Vulkan Linear integer-dot route (docs/kernels/vulkan-linear.md, "Route dot"): its GPU test, then the dot
  # route against gemv (LIN_DOT=0,1) over rows per lane group (VKDOT_GRID) in one linear_variants run per point
  # (A B B A inside), at the suite's T=1 and 2 shapes larger than L2 (VKDOT_POINTS "Q:N:K:TS"); then the Vulkan suite
  GPUBENCH_TEST_ONLY=${VKDOT_TEST_ONLY:-} run lua_test_linear_vulkan timeout 240 $G tests/lua/test_linear_vulkan.lua
  tail -3 "$LOGS/lua_test_linear_vulkan.log"
  V="$G --backend vulkan experiments/linear_variants.lua"
  for pt in ${VKDOT_POINTS:-q4:131072:5120:1,2 q6:248320:5120:1,2 w8:34816:5120:1,2 w8:5120:17408:1,2 q5:6144:5120:1,2 q4:131072:2048:1}; do
    IFS=: read -r q n k ts <<< "$pt"
    n2="vkdot_${q}_${n}_$k"; [[ -f $LOGS/$n2.jsonl ]] && n2=${n2}_b
    run "$n2" timeout 150 $V --qtype $q --n $n --k $k --t $ts --route dot --samples ${VKDOT_SAMPLES:-20} \
      --grid "${VKDOT_GRID:-LIN_DOT=0,1;LIN_NR=2,4,8}" --json "$LOGS/$n2.jsonl"
    grep -vE '^(linear_variants|gpubench):' "$LOGS/$n2.log" | head -16
  done
  [[ ${VKDOT_SUITE:-1} == 1 ]] || exit $status
  run vkdot_suite timeout 200 $G --backend vulkan experiments/linear_suite.lua --suite all --vendor off \
    --json "$LOGS/vkdot_suite.jsonl" --markdown "$LOGS/vkdot_suite.md"
  grep -E ' 1 +[0-9]' "$LOGS/vkdot_suite.log" | head -20; tail -4 "$LOGS/vkdot_suite.log"
  ;;
gemv_ncu)
  gemv_ncu ${GEMV_NCU:-q6_k:131072:GEMV_TOKENS=1 q4_k:131072:GEMV_TOKENS=1}
  ;;
tokens)
  # TOKENS_TESTS=0: the tables only (the tests ran in an earlier call); TOKENS_SHAPES="131072:1 131072:8" picks the runs;
  # TOKENS_KERNELS="q8_0,bf16": those formats only
  if [[ ${TOKENS_TESTS:-1} == 1 ]]; then
    for part in "" _tokens _i8 _tc; do # the CUDA GEMV tests, one file per kernel family
      run lua_test_gemv_cuda$part timeout 200 $G tests/lua/test_gemv_cuda$part.lua
    done
    run lua_test_gemv_tokens_nv timeout 100 $G tests/lua/test_gemv_tokens.lua
  fi
  for b in ${arg2:-cuda vulkan}; do
    for mt in ${TOKENS_SHAPES:-14336:1 14336:2 14336:4 14336:8 131072:1 131072:8}; do
      m=${mt%:*} tk=${mt#*:}
      # 131072 rows: 7.9 GB of weights drawn and checked on the host first (TOKENS_LIMIT_BIG, default 240 s)
      lim=100; [[ $m == 131072 ]] && lim=${TOKENS_LIMIT_BIG:-240}
      run "gemv_tok_${b}_${m}_T$tk" timeout $lim env M=$m K=5120 $G --backend $b experiments/gemv_table.lua --rotate \
        --tokens $tk --rounds 1 ${TOKENS_KERNELS:+--kernels $TOKENS_KERNELS} --json "$LOGS/gemv_tok_${b}_${m}_T$tk.jsonl" --markdown "$LOGS/gemv_tok_${b}_${m}_T$tk.md"
    done
  done
  ;;
swiglu_geo)
  # SWGEO_SHAPES (N,K ...; default the two below); GEOS (space-separated NAME=V,... lists) for every shape,
  # else GEO13 at 13824x5120 and GEO24 at 24576x6144 (defaults below) and the default geometry elsewhere
  for nk in ${SWGEO_SHAPES:-13824,5120 24576,6144}; do
    if [[ -n ${GEOS:-} ]]; then geos=$GEOS
    elif [[ $nk == 13824,5120 ]]; then geos=${GEO13:-WARPS=4 WARPS=1 WARPS=1,KSPLIT=2 WARPS=1,KSPLIT=4 WARPS=2,KSPLIT=2 \
      WARPS=1,UNROLL=4,KSPLIT=2 WARPS=1,UNROLL=4,KSPLIT=4 WARPS=4,UNROLL=4,KSPLIT=2}
    elif [[ $nk == 24576,6144 ]]; then geos=${GEO24:-WARPS=4 WARPS=1 WARPS=1,KSPLIT=2 WARPS=1,UNROLL=4,KSPLIT=4}
    else geos=KSPLIT=2; fi
    for geo in $geos; do swgeo "swgeo${SWGEO_TAG:-}_${nk%,*}_${geo//[=,]/_}" $nk $geo; done
  done
  ;;
vkswiglu_out)
  phase_vkswiglu_out
  ;;
vkreg)
  phase_vkreg
  ;;
next19)
  phase_next19
  ;;
wide)
  phase_wide
  ;;
next53)
  phase_next53
  ;;
next52)
  phase_next52
  ;;
cluster_ab)
  shift; cluster_ab "$@"
  ;;
next65)
  phase_next65
  ;;
next66)
  phase_next66
  ;;
next68)
  phase_next68
  ;;
next69)
  phase_next69
  ;;
next70)
  phase_next70
  ;;
next71)
  phase_next71
  ;;
next79)
  phase_next79
  ;;
short80)
  phase_short80
  ;;
short83)
  phase_short83
  ;;
vk83)
  phase_vk83
  ;;
ra84)
  phase_ra84
  ;;
ra85)
  phase_ra85
  ;;
ra86)
  phase_ra86
  ;;
ra87)
  phase_ra87
  ;;
ra88)
  phase_ra88
  ;;
next80)
  phase_next80
  ;;
next78)
  phase_next78
  ;;
next77)
  phase_next77
  ;;
next76)
  phase_next76
  ;;
next75)
  phase_next75
  ;;
next73)
  phase_next73
  ;;
next72)
  phase_next72
  ;;
xtile_ab)
  shift; xtile_ab "$@"
  ;;
tail_ab)
  shift; tail_ab "$@"
  ;;
next67)
  phase_next67
  ;;
next64)
  phase_next64
  ;;
next63)
  phase_next63
  ;;
next62)
  phase_next62
  ;;
next61)
  phase_next61
  ;;
next60)
  phase_next60
  ;;
next59)
  phase_next59
  ;;
next58)
  phase_next58
  ;;
next57)
  phase_next57
  ;;
next56)
  phase_next56
  ;;
next55)
  phase_next55
  ;;
next54)
  phase_next54
  ;;
next51)
  phase_next51
  ;;
next50)
  phase_next50
  ;;
next49)
  phase_next49
  ;;
next48)
  phase_next48
  ;;
next47)
  phase_next47
  ;;
next46)
  phase_next46
  ;;
next45)
  phase_next45
  ;;
next44)
  phase_next44
  ;;
next43)
  phase_next43
  ;;
next42)
  phase_next42
  ;;
next41)
  phase_next41
  ;;
next40)
  phase_next40
  ;;
next39)
  phase_next39
  ;;
next38)
  phase_next38
  ;;
next37)
  phase_next37
  ;;
next36)
  phase_next36
  ;;
next35)
  phase_next35
  ;;
next34)
  phase_next34
  ;;
next33)
  phase_next33
  ;;
next32)
  phase_next32
  ;;
next31)
  phase_next31
  ;;
next30)
  phase_next30
  ;;
next29)
  phase_next29
  ;;
next28)
  phase_next28
  ;;
next27)
  phase_next27
  ;;
next26)
  phase_next26
  ;;
next25)
  phase_next25
  ;;
next24)
  phase_next24
  ;;
next23)
  phase_next23
  ;;
next22)
  phase_next22
  ;;
next21)
  phase_next21
  ;;
next20)
  phase_next20
  ;;
coop_layout)
  phase_coop_layout
  ;;
moe_geo)
  # grouped kernel geometries (MOE_GEOS: space-separated NAME=V,... lists), gate_up of MOE_GEO_CONFIG (qwen3),
  # m = MOE_GEO_M (8,32,64), both regimes, on MOE_GEO_BACKEND (cuda)
  for geo in ${MOE_GEOS:-GWARPS=4,GSTAGES=3,GTOK=4 GWARPS=2,GTOK=8 GSTAGES=2,GTOK=8 GWARPS=2 GWARPS=1,GTOK=8}; do
    n="moegeo_${MOE_GEO_CONFIG:+${MOE_GEO_CONFIG}_}${geo//[=,]/_}"; [[ -f $LOGS/$n.jsonl ]] && n=${n}_b
    run "$n" timeout ${MOE_GEO_LIMIT:-45} $G --backend ${MOE_GEO_BACKEND:-cuda} experiments/moe_scaling.lua --config ${MOE_GEO_CONFIG:-qwen3_30b_a3b} \
      --projection gate_up --variants grouped --m ${MOE_GEO_M:-8,32,64} --regime both --rounds 1 --grouped-geometry $geo \
      --json "$LOGS/$n.jsonl"
    grep -E '^grouped' "$LOGS/$n.log"
  done
  ;;
devices)
  for mode in same split; do
    run "devices_$mode" env M=14336 K=5120 $G --backend cuda experiments/gemv_table.lua --kernels q4_k,q8_0,bf16 \
      --rotate --devices 0,0 --devices-mode $mode --json "$LOGS/devices_$mode.jsonl"
    cat "$LOGS/devices_$mode.log"
  done
  run devices_spread $G tools/device_spread.lua "$LOGS/devices_same.jsonl"
  cat "$LOGS/devices_spread.log"
  ;;
overlap)
  # Launch overlap (programmatic dependent launch, kernels/cuda/launch_overlap.cuh): its tests (OV_TESTS=0
  # skips), then plain against overlapped launches released by the block's exit (ov0) and at its start (ov1), one
  # process each in A B C C B A order: SwiGLU rotated per shape with its table geometry (OV_SWIGLU=0 skips;
  # OV_SHAPES), the GEMV at OV_M rows (OV_GEMV=0 skips; OV_KERNELS)
  if [[ ${OV_TESTS:-1} == 1 ]]; then
    run ov_c_cuda_backend $BIN/test_cuda_backend
    grep -E "launch overlap" "$LOGS/ov_c_cuda_backend.log"
    for t in ${OV_LUA_TESTS:-test_gpu_module test_swiglu_cuda test_gemv_cuda test_gemv_cuda_tokens test_gemv_cuda_i8 test_gemv_cuda_tc}; do run "ov_$t" $G tests/lua/$t.lua; done
  fi
  if [[ ${OV_SWIGLU:-1} == 1 ]]; then
    for shape in ${OV_SHAPES:-6912,1536:KSPLIT=4,STAGES=3,UNROLL=2 11008,4096:KSPLIT=8,STAGES=2,UNROLL=2 \
        13824,5120:KSPLIT=4,STAGES=2,UNROLL=4 14336,4096:KSPLIT=4,STAGES=2,UNROLL=4 24576,6144:KSPLIT=4,STAGES=2,UNROLL=4}; do
      nk=${shape%%:*}; geo=${shape#*:}
      for cfg in plain ov0 ov1 ov1 ov0 plain; do
        flag=; pf=0; [[ $cfg == ov* ]] && flag=--overlap; [[ $cfg == ov1 ]] && pf=1
        n="ovsw_${nk/,/x}_$cfg"; [[ -f $LOGS/$n.jsonl ]] && n=${n}_b
        run "$n" timeout 90 $G --backend cuda experiments/swiglu_ab.lua --rounds 1 --regime rotated --m-values 1,8 \
          --trials ${OV_TRIALS:-3} --shape $nk --geometry "$geo,EARLY_RELEASE=$pf" $flag --json "$LOGS/$n.jsonl"
        grep -E "^custom" "$LOGS/$n.log" | sed "s/^/$cfg /"
      done
    done
  fi
  if [[ ${OV_GEMV:-1} == 1 ]]; then
    for M in ${OV_M:-14336}; do
      for cfg in plain overlap overlap plain; do
        flag=; [[ $cfg == overlap ]] && flag=--overlap
        n="ovgemv_${M}_$cfg"; [[ -f $LOGS/$n.jsonl ]] && n=${n}_b
        run "$n" timeout 150 env M=$M K=5120 $G --backend cuda experiments/gemv_variants.lua --rotate --rounds 1 \
          --kernels ${OV_KERNELS:-bf16,q8_0,q4_0,q4_k,q5_k,q6_k} --grid "EARLY_RELEASE=0,1" $flag --json "$LOGS/$n.jsonl"
        grep -E "^(bf16|q[0-9])" "$LOGS/$n.log" | sed "s/^/$cfg /"
      done
    done
  fi
  ;;
vkq6)
  # Vulkan q6_k: the float kernel against the integer one (GEMV_IDOT=1, a variant until this A/B:
  # docs/kernels/vulkan-gemv.md, "q6_k") at T = 1 and 8, 14336 x 5120 rotated, both orders
  $G --backend vulkan tests/lua/test_gemv_vulkan_kquant.lua > "$LOGS/vkq6_test.log" 2>&1; tail -1 "$LOGS/vkq6_test.log"
  for o in forward reverse; do
    n="vkq6_$o"
    run "$n" timeout 150 env M=14336 K=5120 ITERS=200 $G --backend vulkan experiments/gemv_variants.lua --rotate \
      --rounds 1 --kernels q6_k --order $o --grid "GEMV_TOKENS=1,8;GEMV_IDOT=0,1" --json "$LOGS/$n.jsonl"
    grep -E "^q6_k" "$LOGS/$n.log" | grep -v invalid
  done
  ;;
vkgeo_big)
  # issue 17's Vulkan-within-10 %-of-CUDA goal at 131072 x 5120, T = 1: each quantized format's integer kernel over
  # lane groups and rows (its geometry was q4_k's, not swept: docs/kernels/vulkan-gemv.md), rotated, both orders,
  # one process per format and order (GEO_FMTS, GEO_GRID; GEO_M rows, 131072)
  for fmt in ${GEO_FMTS:-q6_k q4_0 q4_k q5_k q8_0}; do
    for o in forward reverse; do
      n="vkgeo_${GEO_M:-131072}_${fmt}_$o"
      run "$n" timeout 120 env M=${GEO_M:-131072} K=5120 ITERS=${GEO_ITERS:-100} $G --backend vulkan experiments/gemv_variants.lua \
        --rotate --rounds 1 --kernels $fmt --order $o --grid "${GEO_GRID:-GEMV_IDOT=1;GEMV_T=8,16,32,64;GEMV_NR=2,4,8}" \
        --json "$LOGS/$n.jsonl"
      grep -E "^$fmt" "$LOGS/$n.log" | grep -v invalid
    done
  done
  ;;
readgap)
  # issue 17's T = 1 goal at 14336 x 5120: the GEMV table rotated beside the pure-read kernel over rotated
  # buffers of each format's weight bytes (q4_0/q4_k, q5_k, q6_k, q8_0, bf16), one call, both orders; the
  # read also with its launches overlapped (OVERLAP=1); RG_TABLE=0 skips the table
  for o in $([[ ${RG_TABLE:-1} == 1 ]] && echo forward reverse); do
    run "readgap_gemv_$o" env M=14336 K=5120 $G --backend cuda experiments/gemv_table.lua --rotate --rounds 1 \
      --order $o --json "$LOGS/readgap_gemv_$o.jsonl"
    grep -E "^(f32|f16|bf16|q[0-9])" "$LOGS/readgap_gemv_$o.log"
  done
  run readgap_read $G tools/read_at_size.lua 41.29 50.46 60.21 77.99 146.8
  cat "$LOGS/readgap_read.log"
  run readgap_read_overlap env OVERLAP=1 $G tools/read_at_size.lua 41.29 50.46 60.21 77.99 146.8
  cat "$LOGS/readgap_read_overlap.log"
  ;;
moe_ncu)
  # ncu sections of one cold grouped step (qwen3 gate_up) at each m of MOE_NCU_M (1 8); MOE_NCU_GEO: a
  # --grouped-geometry for all of them
  S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy
     --section LaunchStats --section SchedulerStats --section ComputeWorkloadAnalysis --section InstructionStats"
  for mm in ${MOE_NCU_M:-1 8}; do
    run "ncu_moe_grouped_m$mm" timeout 120 $NCU --cache-control none --clock-control none $S -k regex:grouped -s 30 -c 1 \
      $G --backend cuda experiments/moe_scaling.lua --config qwen3_30b_a3b --m $mm --variants grouped \
      --projection gate_up --regime cold --rounds 1 ${MOE_NCU_GEO:+--grouped-geometry $MOE_NCU_GEO}
    grep -E 'Duration|DRAM Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Issue Slots Busy|No Eligible|Stall|Grid Size|Eligible Warps|L2 Hit|Executed Ipc A|Pipe|Tensor|Block Limit' \
      "$LOGS/ncu_moe_grouped_m$mm.log" | head -40
  done
  ;;
vkmoe_idot)
  # the Vulkan MoE shaders' integer path (MOE_IDOT=1, variants until this A/B: docs/kernels/moe.md, "The integer
  # path"): the Vulkan MoE test, then qwen3 gate_up grouped at m = 1, 8, 32, 64 float / integer (A B C C B A), then
  # batched (the pairs shader) the same way with MOE_T=16 beside it (PAIRS_GEOS), then fused_gate_up's lane groups
  # and rows (FUSED_GEOS)
  run vkmoe_test $G --backend vulkan tests/lua/test_moe_vulkan.lua
  MOE_GEO_BACKEND=vulkan MOE_GEO_M=${MOE_GEO_M:-1,8,32,64} \
    MOE_GEOS=${MOE_GEOS:-"MOE_IDOT=0 MOE_IDOT=1 MOE_IDOT=1,MOE_TC=8 MOE_IDOT=1,MOE_TC=8 MOE_IDOT=1 MOE_IDOT=0"} \
    bash "$0" moe_geo
  for geo in ${PAIRS_GEOS:-MOE_IDOT=0 MOE_IDOT=1 MOE_T=16 MOE_IDOT=1,MOE_T=16 MOE_IDOT=1,MOE_T=16 MOE_T=16 MOE_IDOT=1 MOE_IDOT=0}; do
    n="vkpairs_${geo//[=,]/_}"; [[ -f $LOGS/$n.jsonl ]] && n=${n}_b
    run "$n" timeout 60 $G --backend vulkan experiments/moe_scaling.lua --config qwen3_30b_a3b --projection gate_up \
      --variants batched --m ${MOE_GEO_M:-1,8,32,64} --regime both --rounds 1 --pairs-geometry $geo --json "$LOGS/$n.jsonl"
    grep -E '^batched' "$LOGS/$n.log"
  done
  for geo in ${FUSED_GEOS:-MOE_T=64 MOE_T=16 MOE_T=16,MOE_NR=4 MOE_T=16,MOE_NR=4 MOE_T=16 MOE_T=64}; do
    n="vkfused_${geo//[=,]/_}"; [[ -f $LOGS/$n.jsonl ]] && n=${n}_b
    run "$n" timeout 60 $G --backend vulkan experiments/moe_scaling.lua --config qwen3_30b_a3b --projection gate_up \
      --variants fused_gate_up --m ${MOE_GEO_M:-1,8,32,64} --regime both --rounds 1 --fused-geometry $geo --json "$LOGS/$n.jsonl"
    grep -E '^fused_gate_up' "$LOGS/$n.log"
  done
  ;;
table_big)
  # issue 17's T = 1 goal at 131072 x 5120 (>= 90 % of the read ceiling measured in the same run): the rotated
  # GEMV table, one order per backend (BIG_BACKENDS), each run within BIG_LIMIT seconds
  for b in ${BIG_BACKENDS:-cuda vulkan}; do
    run "table_big_$b" timeout ${BIG_LIMIT:-240} env M=131072 K=5120 $G --backend $b experiments/gemv_table.lua --rotate --rounds 1 \
      --markdown "$LOGS/table_big_$b.md" --json "$LOGS/table_big_$b.jsonl"
    grep -E "^(f32|f16|bf16|q[0-9])|ceiling" "$LOGS/table_big_$b.log"
  done
  ;;
vkclocks)
  # the clocks and P-state while the Vulkan suite and the replay run (nvidia-smi every 100 ms, an instrument
  # outside gpubench), then the same replay on CUDA as the control
  nvidia-smi --query-gpu=timestamp,pstate,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv \
    -lms 100 > "$LOGS/smi_trace.csv" 2>&1 &
  smi=$!
  run vk_replay_c timeout 200 env BACKEND=vulkan $G tools/linear_replay.lua "${REPLAY_LABEL:-35b.output_head T=1}"
  cat "$LOGS/vk_replay_c.log"
  run cuda_replay_c timeout 200 env BACKEND=cuda $G tools/linear_replay.lua "${REPLAY_LABEL:-35b.output_head T=1}"
  cat "$LOGS/cuda_replay_c.log"
  kill $smi
  awk -F', ' 'NR > 1 { n[$2]++ } END { for (p in n) print p, n[p] " samples" }' "$LOGS/smi_trace.csv"
  ;;
vkspin)
  # the Vulkan suite and the replay with the SM clock brought up to its maximum before each timing
  # (clocks.spin_up; SPIN=0.9: to 90 % of it), nvidia-smi's clocks every 100 ms beside them
  nvidia-smi --query-gpu=timestamp,pstate,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv \
    -lms 100 > "$LOGS/smi_spin.csv" 2>&1 &
  smi=$!
  spin=(); [[ -n ${SPIN:-} ]] && spin=(-e "require('gpubench.clocks').SPIN_FRACTION = $SPIN")
  n=vkspin_suite; [[ -f $LOGS/$n.jsonl ]] && n=${n}_b
  run "$n" timeout 200 $G "${spin[@]}" --backend vulkan experiments/linear_suite.lua --suite all --vendor off \
    --json "$LOGS/$n.jsonl"
  grep -E 'output_head' "$LOGS/$n.log" | grep -E ' 1 +[0-9]' | head -4
  grep -E '^\* clocks' "$LOGS/$n.log"
  run vkspin_replay timeout 200 env BACKEND=vulkan $G "${spin[@]}" tools/linear_replay.lua "${REPLAY_LABEL:-35b.output_head T=1}"
  cat "$LOGS/vkspin_replay.log"
  kill $smi
  ;;
vkfused_idot)
  # the fused shader's integer path (the table's since: docs/kernels/moe.md, "Geometry of the integer shaders")
  # against the float one, each at its best lane groups, A B C D D C B A, qwen3 gate/up at m = 1, 8, 32, 64
  # (FUSED_GEOS); then the integer grouped shader's geometry around the rule's (GROUPED_GEOS, A B .. B A)
  run vkmoe_test $G --backend vulkan tests/lua/test_moe_vulkan.lua
  for geo in ${FUSED_GEOS:-MOE_IDOT=0,MOE_T=64 MOE_IDOT=1,MOE_T=32 MOE_IDOT=1,MOE_T=8 MOE_IDOT=0,MOE_T=16 MOE_IDOT=0,MOE_T=16 MOE_IDOT=1,MOE_T=8 MOE_IDOT=1,MOE_T=32 MOE_IDOT=0,MOE_T=64}; do
    n="vkfused_${geo//[=,]/_}"; [[ -f $LOGS/$n.jsonl ]] && n=${n}_b
    run "$n" timeout 60 $G --backend vulkan experiments/moe_scaling.lua --config qwen3_30b_a3b --projection gate_up \
      --variants fused_gate_up --m ${MOE_GEO_M:-1,8,32,64} --regime both --rounds 1 --fused-geometry $geo --json "$LOGS/$n.jsonl"
    grep -E '^fused_gate_up' "$LOGS/$n.log"
  done
  MOE_GEO_BACKEND=vulkan MOE_GEO_M=${MOE_GEO_M:-1,8,32,64} \
    MOE_GEOS=${GROUPED_GEOS:-"MOE_T=8,MOE_NR=2 MOE_T=8,MOE_TC=2 MOE_T=4,MOE_NR=2 MOE_T=4,MOE_NR=2 MOE_T=8,MOE_TC=2 MOE_T=8,MOE_NR=2"} \
    bash "$0" moe_geo
  ;;
*) echo "unknown phase $phase"; exit 2 ;;
esac
exit $status
