#!/usr/bin/env bash
# Trial: Op::T splits forced (TRIAL_SPLITS) on the Llama shapes, chained timing, two rounds.
# Build: git apply trial-lanes.diff; cargo build --release --features
# cudakernels/from-source,cudakernels/internals --bin bench; carry target/release/bench as
# bin/bench_trial beside the bundle. Peers in the same call: native_peers and torch_peers.py
# on data/gemv_shapes.csv, hgemv.
export BENCH_TIMING=chained
O=$1; mkdir -p $O
one() { # shape cfg splits round
  unset TRIAL_LANES TRIAL_SPLITS
  [ -n "$3" ] && export TRIAL_SPLITS=$3
  BENCH_GEMV_SHAPE=$1 ./bin/bench_trial hgemv > $O/$2-$1-r$4.md 2>&1 || echo "FAIL $2 $1"
}
for r in 1 2; do
  for shp in 1x4096x4096 1x14336x4096 1x128256x4096 1x28672x8192 1x4096x14336 1x8192x28672; do
    one $shp base "" $r; one $shp S8 8 $r; one $shp S16 16 $r; one $shp S24 24 $r
  done
done
