#!/usr/bin/env bash
# Trial: vector_columns_plan's lanes/splits forced (TRIAL_LANES, TRIAL_SPLITS), chained timing.
export BENCH_TIMING=chained
O=$1; mkdir -p $O
one() { # shape cfg lanes splits round
  unset TRIAL_LANES TRIAL_SPLITS
  [ -n "$3" ] && export TRIAL_LANES=$3
  [ -n "$4" ] && export TRIAL_SPLITS=$4
  BENCH_GEMV_SHAPE=$1 ./bin/bench_trial batched hgemv > $O/$2-$1-r$5.md 2>&1 || echo "FAIL $2 $1"
}
for r in 1 2; do
  for shp in 32x512x64 32x512x128 64x512x64 64x512x128; do
    one $shp base "" "" $r; one $shp L4 4 "" $r; one $shp L4S1 4 1 $r
    one $shp L8 8 "" $r; one $shp L8S1 8 1 $r; one $shp L16 16 "" $r
  done
  for shp in 32x4096x64 64x4096x64; do
    one $shp base "" "" $r; one $shp L4 4 "" $r; one $shp S4 "" 4 $r; one $shp S16 "" 16 $r
  done
  for shp in 32x4096x128 64x4096x128; do
    one $shp base "" "" $r; one $shp L8 8 "" $r; one $shp S4 "" 4 $r; one $shp S16 "" 16 $r
  done
  shp=1x4096x4096
  one $shp base "" "" $r; one $shp S16 "" 16 $r; one $shp S24 "" 24 $r; one $shp S48 "" 48 $r; one $shp L16 16 "" $r
done
