#!/usr/bin/env bash
# Trial: vector_columns_plan's lanes/splits forced (TRIAL_LANES, TRIAL_SPLITS) on the 512-row heads.
export BENCH_TIMING=chained
O=$1; mkdir -p $O
for r in 1 2; do
 for shp in 32x512x64 32x512x128 64x512x64 64x512x128; do
  for cfg in base L4 L4S1 L8; do
    unset TRIAL_LANES TRIAL_SPLITS
    case $cfg in L4) export TRIAL_LANES=4;; L4S1) export TRIAL_LANES=4 TRIAL_SPLITS=1;; L8) export TRIAL_LANES=8;; esac
    BENCH_GEMV_SHAPE=$shp ./bin/bench_trial batched hgemv > $O/$cfg-$shp-r$r.md 2>&1 || echo "FAIL $cfg $shp"
  done
 done
done
