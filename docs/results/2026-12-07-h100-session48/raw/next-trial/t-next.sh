#!/usr/bin/env bash
# Next trial: the candidate (the Op::T block fold by warp butterflies and one split of four narrow
# tiles where the problems' tiles alone fill the SMs) against main. Run in the unpacked main
# bundle (b/) with the candidate's bundle unpacked in b/next/.
O=$1; mkdir -p $O
export REQUIRE_GPU=1 BENCH_TIMING=chained
SAN=/usr/local/cuda/bin/compute-sanitizer
for t in gpu_gemv_half gpu_sgemv_batched; do
  ./next/tests/$t --test-threads=4 > $O/test-$t.log 2>&1; echo "$t rc=$?"; tail -2 $O/test-$t.log
done
for tool in memcheck racecheck; do
  $SAN --tool $tool --error-exitcode 99 ./next/tests/gpu_gemv_half --exact \
    vector_kernels_at_every_width_alignment_and_batch --test-threads=1 > $O/$tool.log 2>&1
  echo "$tool rc=$?"; tail -2 $O/$tool.log
done
for r in 1 2; do
  ./bin/bench batched hgemv > $O/old-r$r.md 2>&1 || echo "FAIL old $r"
  ./next/bin/bench batched hgemv > $O/new-r$r.md 2>&1 || echo "FAIL new $r"
done
# Narrower tiles in fewer splits on the Llama Op::T shapes (the same blocks as Auto's 32 threads
# a row), with session 47's butterfly-fold trial bench (bin/bench_trial2, TRIAL_LANES and
# TRIAL_SPLITS; from its extra tarball), after 4096² at 8 threads a row and 8 splits ran 2%
# faster than Auto in this session.
one() { # shape cfg lanes splits
  unset TRIAL_LANES TRIAL_SPLITS
  [ -n "$3" ] && export TRIAL_LANES=$3 TRIAL_SPLITS=$4
  BENCH_GEMV_SHAPE=$1 ./bin/bench_trial2 hgemv > $O/$2-$1.md 2>&1 || echo "FAIL $2 $1"
}
if [ -x bin/bench_trial2 ]; then
  for shp in 1x4096x4096 1x14336x4096 1x128256x4096; do
    one $shp base; one $shp L16S16 16 16; one $shp L8S8 8 8
  done
  one 1x28672x8192 base; one 1x28672x8192 L16S8 16 8; one 1x28672x8192 L8S4 8 4
fi
# The same one-split plans with the old fold (session 47's bin/bench_trial: the serial fold, the
# plan forced by TRIAL_LANES and TRIAL_SPLITS): is the butterfly fold what makes them pay?
if [ -x bin/bench_trial ]; then
  for r in 1 2; do
    TRIAL_LANES=2 TRIAL_SPLITS=1 BENCH_GEMV_SHAPE=64x4096x64 ./bin/bench_trial batched hgemv \
      > $O/oldfoldL2S1-64x4096x64-r$r.md 2>&1 || echo "FAIL oldfold 64"
    TRIAL_LANES=4 TRIAL_SPLITS=1 BENCH_GEMV_SHAPE=64x4096x128 ./bin/bench_trial batched hgemv \
      > $O/oldfoldL4S1-64x4096x128-r$r.md 2>&1 || echo "FAIL oldfold 128"
  done
fi
