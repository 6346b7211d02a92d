#!/usr/bin/env bash
# Next trial: Op::T plans forced against Auto, in the unpacked bundle (b/) with session 47's
# `bin/bench_trial2` from extra-next.tar.xz (the warp-butterfly fold, as main since 7aef813;
# TRIAL_LANES and TRIAL_SPLITS force the plan; every timed row's outputs checked exactly).
#   PLANS=llama  the six Llama Op::T shapes at 32, 16 and 8 threads per row, each at about half
#                a wave (256 blocks on an H100) and a whole wave (512), `hgemv` section
#   PLANS=heads  the 4,096-row heads still below cuBLAS (32 × 4096 × 128 f32, 64 × 4096 × 64),
#                `batched hgemv` sections (f32 and halves)
# `base` is the trial bench's Auto, which predates `one_split_plan` (64 × 4096 × 64 there: 8
# threads per row, 8 splits; main's Auto is L2S1). Two rounds, round 2 in reverse shape
# order, each in its own folder: `python3 scripts/trial_table.py --peers GEMV_DIR DIR/r1 DIR/r2`.
O=$1; mkdir -p "$O/r1" "$O/r2"
export REQUIRE_GPU=1 BENCH_TIMING=chained
# shape  then CONFIG:lanes:splits … (Auto's plan for each shape is in the README).
case ${PLANS:-llama} in
  llama)
    SECTIONS=hgemv
    SHAPES=(
      "1x4096x4096 L32S16:32:16 L16S8:16:8 L16S16:16:16 L8S4:8:4 L8S8:8:8"
      "1x14336x4096 L32S16:32:16 L16S8:16:8 L16S16:16:16 L8S4:8:4 L8S8:8:8"
      "1x4096x14336 L32S4:32:4 L16S2:16:2 L16S4:16:4 L8S1:8:1 L8S2:8:2"
      "1x28672x8192 L32S8:32:8 L16S4:16:4 L16S8:16:8 L8S2:8:2 L8S4:8:4"
      "1x8192x28672 L32S2:32:2 L16S1:16:1 L16S2:16:2 L8S1:8:1"
      "1x128256x4096 L32S16:32:16 L16S8:16:8 L16S16:16:16 L8S4:8:4 L8S8:8:8"
    ) ;;
  heads)
    SECTIONS="batched hgemv"
    SHAPES=(
      "64x4096x64 L2S1:2:1 L2S2:2:2 L4S2:4:2 L4S4:4:4 L8S4:8:4"
      "32x4096x128 L16S8:16:8 L8S4:8:4 L8S8:8:8 L4S2:4:2 L4S4:4:4 L2S1:2:1"
    ) ;;
  *) echo "PLANS is llama or heads" >&2; exit 2 ;;
esac
one() { # round shape config lanes splits
  unset TRIAL_LANES TRIAL_SPLITS
  [ -n "$4" ] && export TRIAL_LANES=$4 TRIAL_SPLITS=$5
  BENCH_GEMV_SHAPE=$2 ./bin/bench_trial2 $SECTIONS > "$O/r$1/$3-$2.md" 2>&1 || echo "FAIL r$1 $3 $2"
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
