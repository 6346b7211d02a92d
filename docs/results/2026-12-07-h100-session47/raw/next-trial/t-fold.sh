#!/usr/bin/env bash
# Trial: the Op::T block fold by warp butterflies (bench_trial2) against the bundle's bench, at
# Auto's plan and at narrow tiles in one split (no hand-off across blocks), chained, one round.
# Sections batched (f32) and hgemv (halves); every row's outputs are checked by the bench.
export BENCH_TIMING=chained
O=$1; mkdir -p $O
one() { # bin shape cfg lanes splits
  unset TRIAL_LANES TRIAL_SPLITS
  [ -n "$4" ] && export TRIAL_LANES=$4
  [ -n "$5" ] && export TRIAL_SPLITS=$5
  BENCH_GEMV_SHAPE=$2 ./bin/$1 batched hgemv > $O/$3-$2.md 2>&1 || echo "FAIL $3 $2"
}
for shp in 32x4096x64 64x4096x64 32x4096x128 64x4096x128; do
  one bench $shp old; one bench_trial2 $shp base
  one bench_trial2 $shp L1S1 1 1; one bench_trial2 $shp L2S1 2 1; one bench_trial2 $shp L4S1 4 1
done
for shp in 32x512x64 64x512x128; do
  one bench $shp old; one bench_trial2 $shp base; one bench_trial2 $shp L2S1 2 1
done
one bench 1x4096x4096 old; one bench_trial2 1x4096x4096 base
one bench_trial2 1x4096x4096 L8S8 8 8; one bench_trial2 1x4096x4096 L4S4 4 4
