#!/usr/bin/env bash
# GPU-side runner for the bundle made by scripts/bundle.sh (copied there as run.sh).
# Needs no Rust toolchain. Usage:  REQUIRE_GPU=1 ./run.sh [STAGE...]   (default: all)
#   tests      every binary in tests/ with --test-threads=4; sums libtest "X passed; Y failed"
#   sanitizer  compute-sanitizer memcheck over bin/cudakernels and chosen GPU tests
#   racecheck, synccheck, initcheck: that compute-sanitizer tool over tests/gpu_sweep (every
#              ladder step at one block size, every typed kernel, every sgemv kernel)
#   sanitizers all four tools
#   main       bin/cudakernels
#   consumer   bin/consumer: the stable-toolchain application on the prebuilt kernels; bin/cudarc_user:
#              a cudarc application on the adapter (adapters/cudarc)
#   open       bin/open_time in new processes: PTX (JIT) against the cubin, JIT cache off, then warm
#   bench      bin/bench, then python3 torch_peers.py, then the native peers; BENCH_SECTIONS (bin/bench's
#              section names, e.g. "batched hgemv") limits all three to those sections, and
#              BENCH_OUT names a folder for their tables as bench.md, torch.md and native.md
#              (what gemv_table.py and axis_table.py read) instead of the log
#   native     nvcc native_peers.cu (-lcublas), then ./native_peers (CUB, cuBLAS; one line and a
#              skip without nvcc)
#   charts     python3 charts.py over $BENCH_CSV_DIR (one line and a skip without matplotlib)
#   all        tests, sanitizers, main, consumer, open, bench, charts
# Always runs every requested stage; exits non-zero if anything failed.
set -uo pipefail
cd "$(dirname "$(readlink -f "$0")")"
export REQUIRE_GPU="${REQUIRE_GPU:-}"

MODE="${*:-all}"
STAGES=""
for m in ${MODE}; do
    case "$m" in
        all) STAGES="$STAGES tests sanitizer racecheck synccheck initcheck main consumer open bench charts" ;;
        sanitizers) STAGES="$STAGES sanitizer racecheck synccheck initcheck" ;;
        tests|sanitizer|racecheck|synccheck|initcheck|main|consumer|open|bench|native|charts) STAGES="$STAGES $m" ;;
        *) echo "usage: $0 [tests|sanitizer|racecheck|synccheck|initcheck|sanitizers|main|consumer|open|bench|native|charts|all]..." >&2; exit 2 ;;
    esac
done
export BENCH_CSV_DIR="${BENCH_CSV_DIR:-$PWD/csv}"
SHAPES=data/sgemv_shapes.csv   # the sgemv shapes the peers time (the Rust binaries embed it)
AXIS_SHAPES=data/axis_shapes.csv   # the axis-reduction shapes, likewise
GEMV_SHAPES=data/gemv_shapes.csv   # the decoding gemv shapes (batched, half), likewise
mkdir -p "$BENCH_CSV_DIR"

FAILED=0          # any failure anywhere -> non-zero exit
SUMMARY=()        # one line per stage/binary, printed at the end

hdr() { printf '\n======== %s ========\n' "$*"; }
note() { SUMMARY+=("$1: $2"); [ "$2" = PASS ] || FAILED=1; }
SECTIONS=(${BENCH_SECTIONS:-})   # the bench stage's sections (all when empty)
# A bench-stage program's tables: into $BENCH_OUT/$1 when BENCH_OUT is set, else the log.
tables_to() { if [ -n "${BENCH_OUT:-}" ]; then mkdir -p "$BENCH_OUT" && cat >"$BENCH_OUT/$1"; else cat; fi; }

stage_tests() {
    local total_pass=0 total_fail=0 b name log rc p f results=()
    log=$(mktemp)
    for b in tests/*; do
        [ -f "$b" ] && [ -x "$b" ] || continue
        name=$(basename "$b")
        hdr "test binary: $name"
        "./$b" --test-threads=4 2>&1 | tee "$log"
        rc=${PIPESTATUS[0]}
        # libtest: "test result: ok. X passed; Y failed; ..."
        read -r p f < <(sed -nE 's/^test result: [A-Za-z]+\. ([0-9]+) passed; ([0-9]+) failed.*/\1 \2/p' "$log" |
                        awk '{p+=$1; f+=$2; n++} END {if (n) print p, f; else print "-", "-"}')
        if [ "$p" = "-" ]; then
            p=0; f=1
            echo "!! $name exited with status $rc and no libtest summary (counted as 1 failed)"
        fi
        total_pass=$((total_pass + p)); total_fail=$((total_fail + f))
        if [ "$rc" -eq 0 ] && [ "$f" -eq 0 ]; then
            results+=("PASS  $name ($p passed)")
        else
            results+=("FAIL  $name ($p passed, $f failed, exit $rc)"); FAILED=1
        fi
    done
    rm -f "$log"
    hdr "test results"
    [ ${#results[@]} -gt 0 ] || { echo "no test binaries found in tests/"; total_fail=1; FAILED=1; }
    printf '%s\n' "${results[@]}"
    echo "$total_pass passed, $total_fail failed"
    SUMMARY+=("tests: $total_pass passed, $total_fail failed")
}

find_sanitizer() {
    local c
    if command -v compute-sanitizer >/dev/null 2>&1; then command -v compute-sanitizer; return 0; fi
    for c in /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda*/bin/compute-sanitizer \
             /opt/nvidia/*/compute-sanitizer /opt/nvidia/*/compute-sanitizer/compute-sanitizer; do
        [ -f "$c" ] && [ -x "$c" ] && { echo "$c"; return 0; }
    done
    return 1
}

stage_sanitizer() {
    local cs t
    hdr "compute-sanitizer memcheck"
    if ! cs=$(find_sanitizer); then
        echo "!! compute-sanitizer not found (PATH, /usr/local/cuda*/bin, /opt/nvidia/*): sanitizer stage FAILED"
        note "sanitizer" "FAIL (compute-sanitizer not found)"
        return
    fi
    echo "using $cs"
    hdr "sanitizer: bin/cudakernels"
    if "$cs" --tool memcheck --error-exitcode 99 ./bin/cudakernels; then note "sanitizer bin/cudakernels" PASS
    else note "sanitizer bin/cudakernels" "FAIL (exit $?)"; fi
    # The cudarc adapter: cudarc's stream-ordered frees after the library's kernels.
    hdr "sanitizer: bin/cudarc_user"
    if "$cs" --tool memcheck --error-exitcode 99 ./bin/cudarc_user; then note "sanitizer bin/cudarc_user" PASS
    else note "sanitizer bin/cudarc_user" "FAIL (exit $?)"; fi
    # Tests chosen to cover every kernel family at moderate sizes (memcheck is slow).
    for t in "gpu_sgemv alpha_beta_lda_and_offset_views" "gpu_sgemv empty_shapes_and_bad_input" \
             "gpu_typed typed_u8" "gpu_typed typed_f64" "gpu_typed signed_zeros_order_and_all_nan" \
             "gpu_reduce reduce_into_writes_the_output_and_checks_it" "gpu_reduce auto_is_deterministic_and_second_pass_agrees" \
             "gpu_sweep every_kernel_once" "gpu_streams value_calls_allocate_nothing_once_the_scratch_has_grown" \
             "gpu_stress stress_64_streams_of_one_handle" "value_calls back_to_back_value_calls_each_return_their_own_result" \
             "gpu_sgemv alpha_zero_reads_neither_a_nor_x" "gpu_half half_signed_zeros_and_outputs" \
             "gpu_half bf16_sums_are_deterministic" "gpu_axis axis_i16" "gpu_axis named_strategies" \
             "gpu_axis_segments segments_f32" "gpu_axis_segments offsets_are_clamped_to_the_input" \
             "gpu_arg arg_u8" "gpu_arg bad_outputs_are_refused_before_any_launch" \
             "gpu_axis_arg axis_arg_bf16" "gpu_axis_arg named_strategies_i8" "gpu_axis_arg bad_input_is_refused" \
             "gpu_sgemv_batched edge_shapes_and_alpha_zero" "gpu_sgemv_batched strided_batches_of_1_2_and_1000" \
             "gpu_gemv_half edge_shapes_and_alpha_zero" "gpu_gemv_half vector_kernels_on_attention_decode" \
             "gpu_caller_stream library_calls_on_the_callers_stream_follow_its_kernels_and_precede_its_copies" \
             "gpu_caller_stream raw_entry_points_take_stream_ordered_memory_on_the_callers_stream" \
             "gpu_launch_overlap chained_calls_read_what_the_call_before_wrote" \
             "cudarc_gpu other_streams_are_ordered_by_cudarcs_events"; do
        set -- $t
        [ -x "tests/$1" ] || { echo "(tests/$1 not in bundle, skipped)"; continue; }
        hdr "sanitizer: tests/$1 $2"
        if "$cs" --tool memcheck --error-exitcode 99 "./tests/$1" --exact "$2" --test-threads=1; then note "sanitizer $1 $2" PASS
        else note "sanitizer $1 $2" "FAIL (exit $?)"; fi
    done
}

# One compute-sanitizer tool over tests/gpu_sweep: every kernel once, checked.
sanitize_sweep() {
    local tool=$1 cs
    hdr "compute-sanitizer $tool: tests/gpu_sweep every_kernel_once"
    if ! cs=$(find_sanitizer); then
        note "$tool" "FAIL (compute-sanitizer not found)"
        return
    fi
    [ -x tests/gpu_sweep ] || { note "$tool" "FAIL (tests/gpu_sweep not in bundle)"; return; }
    if "$cs" --tool "$tool" --error-exitcode 99 ./tests/gpu_sweep --exact every_kernel_once --test-threads=1; then
        note "$tool gpu_sweep" PASS
    else note "$tool gpu_sweep" "FAIL (exit $?)"; fi
}
stage_racecheck() { sanitize_sweep racecheck; }
stage_synccheck() { sanitize_sweep synccheck; }
stage_initcheck() { sanitize_sweep initcheck; }

stage_main() {
    hdr "main: bin/cudakernels"
    if ./bin/cudakernels; then note "main" PASS; else note "main" "FAIL (exit $?)"; fi
}

stage_consumer() {
    hdr "consumer: bin/consumer (stable toolchain, prebuilt kernels)"
    if ./bin/consumer; then note "consumer" PASS; else note "consumer" "FAIL (exit $?)"; fi
    hdr "consumer: bin/cudarc_user (a cudarc application, cudakernels-cudarc)"
    if [ ! -x bin/cudarc_user ]; then note "cudarc_user" "FAIL (bin/cudarc_user not in bundle)"
    elif ./bin/cudarc_user; then note "cudarc_user" PASS
    else note "cudarc_user" "FAIL (exit $?)"; fi
}

stage_open() {
    local choice i cache rc=0
    hdr "open: new processes, CUDA_CACHE_DISABLE=1"
    for choice in ptx auto; do
        for i in 1 2 3; do CUDA_CACHE_DISABLE=1 ./bin/open_time "$choice" || rc=1; done
    done
    hdr "open: new processes, warm JIT cache (the first run of each fills it)"
    cache=$(mktemp -d)
    for choice in ptx auto; do
        for i in 1 2 3 4; do CUDA_CACHE_PATH=$cache ./bin/open_time "$choice" || rc=1; done
    done
    rm -rf "$cache"
    if [ "$rc" -eq 0 ]; then note "open" PASS; else note "open" "FAIL"; fi
}

stage_bench() {
    hdr "bench: bin/bench"
    if ./bin/bench "${SECTIONS[@]}" | tables_to bench.md; then note "bench" PASS; else note "bench" "FAIL (exit $?)"; fi
    hdr "bench: torch_peers.py"
    local only=()
    [ ${#SECTIONS[@]} -eq 0 ] || only=(--only "$(IFS=,; echo "${SECTIONS[*]}")")
    if PYTHONUNBUFFERED=1 python3 torch_peers.py "${only[@]}" --shapes "$SHAPES" --axis-shapes "$AXIS_SHAPES" --gemv "$GEMV_SHAPES" | tables_to torch.md; then note "torch_peers" PASS; else note "torch_peers" "FAIL (exit $?)"; fi
    stage_native
}

# The native C++ peers: native_peers.cu compiled here with nvcc (CUDA on the GPU machine).
stage_native() {
    local nvcc cc
    hdr "native: native_peers.cu (CUB, cuBLAS)"
    nvcc=$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null || true)
    if [ -z "$nvcc" ]; then echo "native: nvcc not found, native peers skipped"; SUMMARY+=("native: SKIPPED (no nvcc)"); return; fi
    cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d .)
    if "$nvcc" -O3 -std=c++17 -arch="sm_${cc:-90}" -o native_peers native_peers.cu -lcublas \
        && ./native_peers --shapes "$SHAPES" --axis-shapes "$AXIS_SHAPES" --gemv "$GEMV_SHAPES" "${SECTIONS[@]}" | tables_to native.md; then
        note "native" PASS
    else note "native" "FAIL (exit $?)"; fi
}

stage_charts() {
    hdr "charts: charts.py over $BENCH_CSV_DIR"
    if ! python3 -c "import matplotlib" 2>/dev/null; then
        echo "charts: matplotlib not installed, charts skipped (draw them from the CSV files elsewhere)"
        SUMMARY+=("charts: SKIPPED (no matplotlib)"); return
    fi
    if python3 charts.py "$BENCH_CSV_DIR" "$BENCH_CSV_DIR/charts"; then note "charts" PASS; else note "charts" "FAIL (exit $?)"; fi
}

if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
else
    echo "(nvidia-smi not available)"
fi

for s in $STAGES; do "stage_$s"; done

hdr "summary ($MODE)"
printf '%s\n' "${SUMMARY[@]}"
[ "$FAILED" -eq 0 ] && echo "ALL OK" || echo "SOME STAGES FAILED"
exit "$FAILED"
