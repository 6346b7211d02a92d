#!/usr/bin/env bash
# Next trial: the candidate (the Op::T block fold by warp butterflies and one split of four narrow
# tiles where the problems' tiles alone fill the SMs) against main, most telling first so that a
# call cut short keeps what ran: the one-split plans with the old fold, main against the
# candidate (round 1), the candidate's gemv tests, round 2, the sanitizers, then the Llama rows
# of narrower tiles, a sweep of 4096²'s tiles and splits, and the largest Llama rows. Run in the
# unpacked main bundle (b/) with the candidate's bundle unpacked in b/next/.
O=$1; mkdir -p $O
export REQUIRE_GPU=1 BENCH_TIMING=chained
SAN=/usr/local/cuda/bin/compute-sanitizer
oldfold() { # round
  TRIAL_LANES=2 TRIAL_SPLITS=1 BENCH_GEMV_SHAPE=64x4096x64 ./bin/bench_trial batched hgemv \
    > $O/oldfoldL2S1-64x4096x64-r$1.md 2>&1 || echo "FAIL oldfold 64"
  TRIAL_LANES=4 TRIAL_SPLITS=1 BENCH_GEMV_SHAPE=64x4096x128 ./bin/bench_trial batched hgemv \
    > $O/oldfoldL4S1-64x4096x128-r$1.md 2>&1 || echo "FAIL oldfold 128"
}
ab() { # round
  ./bin/bench batched hgemv > $O/old-r$1.md 2>&1 || echo "FAIL old $1"
  ./next/bin/bench batched hgemv > $O/new-r$1.md 2>&1 || echo "FAIL new $1"
  echo "round $1 done at $SECONDS s"
}
oldfold 1; echo "oldfold done at $SECONDS s"
ab 1
for t in gpu_gemv_half gpu_sgemv_batched; do
  ./next/tests/$t --test-threads=4 > $O/test-$t.log 2>&1; echo "$t rc=$?"; tail -2 $O/test-$t.log
done
ab 2
oldfold 2
for tool in memcheck racecheck; do
  $SAN --tool $tool --error-exitcode 99 ./next/tests/gpu_gemv_half --exact \
    vector_kernels_at_every_width_alignment_and_batch --test-threads=1 > $O/$tool.log 2>&1
  echo "$tool rc=$?"; tail -2 $O/$tool.log
done
echo "sanitizers done at $SECONDS s"
one() { # shape cfg lanes splits
  unset TRIAL_LANES TRIAL_SPLITS
  [ -n "$3" ] && export TRIAL_LANES=$3 TRIAL_SPLITS=$4
  BENCH_GEMV_SHAPE=$1 ./bin/bench_trial2 hgemv > $O/$2-$1.md 2>&1 || echo "FAIL $2 $1"
}
for shp in 1x4096x4096 1x14336x4096; do
  one $shp base; one $shp L16S16 16 16; one $shp L8S8 8 8
done
# 4096² at fewer, narrower tiles than L8S8 (the fold trial's best, 2% faster than Auto): does one
# split of narrow tiles, which pays on the 4,096-row heads, pay on one 4096² matrix too?
for cfg in L2S1:2:1 L4S1:4:1 L4S2:4:2 L8S4:8:4 L16S4:16:4 L16S8:16:8; do
  IFS=: read -r tag l s <<< "$cfg"; one 1x4096x4096 $tag $l $s
done
# The largest Llama rows last (the longest runs).
one 1x128256x4096 base; one 1x128256x4096 L16S16 16 16; one 1x128256x4096 L8S8 8 8
one 1x28672x8192 base; one 1x28672x8192 L16S8 16 8; one 1x28672x8192 L8S4 8 4
echo "all done at $SECONDS s"
