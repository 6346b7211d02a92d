#!/usr/bin/env bash
# Next trial: the Llama Op::T shapes (one matrix a call) at 32, 16 and 8 threads per row, each
# at about half a wave (256 blocks on an H100) and a whole wave (512) of blocks, against Auto
# (32 threads per row, splits to one wave). Session 47's `bin/bench_trial2` (the warp-butterfly
# fold, with TRIAL_LANES and TRIAL_SPLITS forcing the plan) from extra-next.tar.xz, run in the
# unpacked bundle (b/). Two rounds, round 2 in reverse shape order, each in its own folder:
# compare with `python3 scripts/trial_table.py DIR/r1 DIR/r2`.
O=$1; mkdir -p "$O/r1" "$O/r2"
export REQUIRE_GPU=1 BENCH_TIMING=chained
# shape  then CONFIG:lanes:splits … (the splits giving ~256 and ~512 blocks at each width;
# Auto's plan for each shape is in the README).
SHAPES=(
  "1x4096x4096 L32S16:32:16 L16S8:16:8 L16S16:16:16 L8S4:8:4 L8S8:8:8"
  "1x14336x4096 L32S16:32:16 L16S8:16:8 L16S16:16:16 L8S4:8:4 L8S8:8:8"
  "1x4096x14336 L32S4:32:4 L16S2:16:2 L16S4:16:4 L8S1:8:1 L8S2:8:2"
  "1x28672x8192 L32S8:32:8 L16S4:16:4 L16S8:16:8 L8S2:8:2 L8S4:8:4"
  "1x8192x28672 L32S2:32:2 L16S1:16:1 L16S2:16:2 L8S1:8:1"
  "1x128256x4096 L32S16:32:16 L16S8:16:8 L16S16:16:16 L8S4:8:4 L8S8:8:8"
)
one() { # round shape config lanes splits
  unset TRIAL_LANES TRIAL_SPLITS
  [ -n "$4" ] && export TRIAL_LANES=$4 TRIAL_SPLITS=$5
  BENCH_GEMV_SHAPE=$2 ./bin/bench_trial2 hgemv > "$O/r$1/$3-$2.md" 2>&1 || echo "FAIL r$1 $3 $2"
}
shape_round() { # round line
  set -- "$1" $2; local r=$1 shp=$2; shift 2
  one "$r" "$shp" base
  for cfg in "$@"; do IFS=: read -r tag l s <<< "$cfg"; one "$r" "$shp" "$tag" "$l" "$s"; done
  echo "r$r $shp done at $SECONDS s"
}
for line in "${SHAPES[@]}"; do shape_round 1 "$line"; done
for ((i = ${#SHAPES[@]} - 1; i >= 0; i--)); do shape_round 2 "${SHAPES[$i]}"; done
echo "all done at $SECONDS s"
