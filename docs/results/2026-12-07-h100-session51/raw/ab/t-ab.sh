#!/usr/bin/env bash
# A/B of short_walk_split_plan: main's bundle (b/) against the candidate's (bundle-next.tar.xz,
# carried, unpacked in b/next/) on the three Llama Op::T shapes whose plan changes, two
# interleaved rounds (round 2 candidate first), `hgemv` section, chained timing; then the
# candidate's gemv tests, cuBLAS on the hgemv section (the runner's native stage), the
# trial of eight rows in flight where its cubin was carried, and, where Nsight Compute is
# installed, a profile of one 4096² Op::T call of ours and of cuBLAS's gemv kernels on 4096²
# (throughput, memory and occupancy sections).
# Compare: python3 scripts/bench_ab.py --a O/old-* --b O/new-*
O=$1; mkdir -p "$O"
export REQUIRE_GPU=1 BENCH_TIMING=chained
mkdir -p next && tar -C next -xJf ../bundle-next.tar.xz || exit 1
SHAPES=(1x4096x4096 1x14336x4096 1x4096x14336)
one() { # tag bench round shape
  BENCH_GEMV_SHAPE=$4 $2 hgemv > "$O/$1-$4-r$3.md" 2>&1 || echo "FAIL $1 r$3 $4"
}
round() { # round
  for s in "${SHAPES[@]}"; do
    if [ $1 = 2 ]; then one new ./next/bin/bench $1 $s; one old ./bin/bench $1 $s
    else one old ./bin/bench $1 $s; one new ./next/bin/bench $1 $s; fi
  done
  echo "round $1 done at $SECONDS s"
}
round 1; round 2
for t in gpu_gemv_half gpu_sgemv_batched; do
  ./next/tests/$t --test-threads=4 > "$O/test-$t.log" 2>&1; echo "$t rc=$?"; tail -2 "$O/test-$t.log"
done
# The runner's native stage (it builds ./native_peers here), its hgemv tables in $O/native.md.
BENCH_SECTIONS=hgemv BENCH_OUT="$O" ./run.sh native > "$O/native.log" 2>&1
echo "native rc=$? at $SECONDS s"
# Where rows8/kernels.sm_90.cubin is there (EXTRA=extra-rows8.tar.xz: trial-rows8.diff's SASS,
# eight rows of 16-byte loads in flight a thread in the `_tv` entries): the candidate's bench on
# its own images against the same bench on that cubin, the Op::T shapes below cuBLAS and two
# long ones, two interleaved rounds. Compare: bench_ab.py --a O/img-* --b O/rows8-*
if [ -f rows8/kernels.sm_90.cubin ]; then
  for r in 1 2; do
    for s in 1x4096x4096 1x14336x4096 64x4096x64 32x4096x128 32x4096x64 64x32768x128 1x128256x4096; do
      BENCH_GEMV_SHAPE=$s ./next/bin/bench batched hgemv > "$O/img-$s-r$r.md" 2>&1 || echo "FAIL img r$r $s"
      BENCH_GEMV_SHAPE=$s ./next/bin/bench --cubin rows8/kernels.sm_90.cubin batched hgemv \
        > "$O/rows8-$s-r$r.md" 2>&1 || echo "FAIL rows8 r$r $s"
    done
    echo "rows8 round $r done at $SECONDS s"
  done
fi
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
if [ -z "$NCU" ]; then echo "profile: no ncu, skipped"; exit 0; fi
SECTIONS=(--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats)
BENCH_GEMV_SHAPE=1x4096x4096 "$NCU" -k regex:gemv_bf16_bf16_bf16_tv -c 1 "${SECTIONS[@]}" \
  ./next/bin/bench hgemv > "$O/ncu-ours-4096.txt" 2>&1
echo "profile ours rc=$? at $SECONDS s"
{ grep '^batch' data/gemv_shapes.csv; grep '^1,4096,4096,' data/gemv_shapes.csv; } > "$O/one_shape.csv"
"$NCU" -k regex:'gemv|gemm|Gemv|Gemm' -c 24 "${SECTIONS[@]}" ./native_peers --shapes data/sgemv_shapes.csv \
  --axis-shapes data/axis_shapes.csv --gemv "$O/one_shape.csv" hgemv > "$O/ncu-cublas-4096.txt" 2>&1
echo "profile cuBLAS rc=$? at $SECONDS s"
