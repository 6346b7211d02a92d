#!/usr/bin/env bash
# Trial: Op::T threads per row (TRIAL_LANES, up to 128 with the fold over t, t + block, …) and
# splits (TRIAL_SPLITS) on the Llama shapes and the 4,096-row heads, chained, hgemv/batched.
export BENCH_TIMING=chained
O=$1; mkdir -p $O
one() { # section shape cfg lanes splits round
  unset TRIAL_LANES TRIAL_SPLITS
  [ -n "$4" ] && export TRIAL_LANES=$4
  [ -n "$5" ] && export TRIAL_SPLITS=$5
  BENCH_GEMV_SHAPE=$2 ./bin/bench_trial $1 > $O/$3-$2-r$6.md 2>&1 || echo "FAIL $3 $2"
}
for r in 1; do
  for shp in 1x4096x4096; do
    one hgemv $shp base "" "" $r; one hgemv $shp L32S16 32 16 $r; one hgemv $shp L64 64 "" $r
    one hgemv $shp L64S16 64 16 $r; one hgemv $shp L64S8 64 8 $r; one hgemv $shp L128S8 128 8 $r
  done
  for shp in 1x128256x4096 1x8192x28672 1x14336x4096; do
    one hgemv $shp base "" "" $r; one hgemv $shp L64 64 "" $r; one hgemv $shp L128 128 "" $r
  done
done
