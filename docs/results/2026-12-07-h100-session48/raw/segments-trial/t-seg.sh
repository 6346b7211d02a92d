#!/usr/bin/env bash
# Trial: ragged segments' values ops (sum, max) a block of eight warps each (the `pieces` kernel's
# row-per-block path over offsets) against a warp each (Auto), interleaved, three rounds.
O=$1; mkdir -p $O
export BENCH_AXIS_RAGGED=1
TRIAL_SEG_BLOCK=1 ./bin/test_seg --test-threads=1 > $O/test-trial.log 2>&1; echo "test_seg trial rc=$?"; tail -3 $O/test-trial.log
for r in 1 2 3; do
  ./bin/bench_seg axis > $O/base-r$r.md 2>&1 || echo "FAIL base $r"
  TRIAL_SEG_BLOCK=1 ./bin/bench_seg axis > $O/blk-r$r.md 2>&1 || echo "FAIL blk $r"
done
