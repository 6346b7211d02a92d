#!/usr/bin/env bash
# One device call from the repository root on the GPU machine: unpacks $BUNDLE (a tarball of
# scripts/bundle.sh, default bundle.tar.xz, carried) and $EXTRA (more binaries, optional) into
# b/, records the GPU in $W/gpu.txt and runs $STAGES (default tests), each stage's output
# under $W (default /tmp/devcall):
#   tests|main|consumer|open   the runner's stage, its log in $W/<stage>.log
#   cab|gab                    the axis or decoding gemv bench, $ROUNDS rounds × $CUBINS
#   axis|gemv                  the runner's bench stage (bench, torch and native peers) over
#                              that section, tables in $W/<stage>/
#   san                        compute-sanitizer over $SPECS (tool:test-binary:test ...)
#   trial                      bash $TRIAL (a path from the repository root) in b/ with the
#                              folder $W/trial as its argument, cut at $TRIAL_S seconds (450)
#   none                       unpack only
# After each stage $W is packed into $OUT/results.tgz: the device tool brings back at most
# eight files from $OUT, so a call that ends early keeps every stage that finished.
# The cubins in kernels/images (tracked, about 27 MB) are not needed there: move them out of
# the tree before the call, since what travels is limited to 64 MiB.
set -uo pipefail
OUT=${OUT:-/tmp/out}; W=${W:-/tmp/devcall}; mkdir -p "$OUT" && rm -rf "$W" && mkdir -p "$W"
ROOT=$PWD
pack() { tar -C "$W" -czf "$OUT/results.tgz" . ; }
rm -rf b && mkdir b && tar -C b -xJf "${BUNDLE:-bundle.tar.xz}" || exit 1
[ -n "${EXTRA:-}" ] && tar -C b -xJf "$EXTRA"
cd b
export REQUIRE_GPU=1 BENCH_CSV_DIR=$W/csv
mkdir -p "$BENCH_CSV_DIR"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv | tee "$W/gpu.txt"
SAN=/usr/local/cuda/bin/compute-sanitizer
# The bench sections of the axis (cab, axis) and decoding gemv (gab, gemv) stages.
sections() { case $1 in cab|axis) echo axis ;; gab|gemv) echo "batched hgemv" ;; esac; }
for st in ${STAGES:-tests}; do t0=$SECONDS
  case $st in
    tests|main|consumer|open) ./run.sh $st > "$W/$st.log" 2>&1; echo "$st rc=$?"; tail -4 "$W/$st.log" ;;
    cab|gab)
      sec=$(sections $st)
      for r in ${ROUNDS:-1 2}; do for c in ${CUBINS:-head}; do
        tag=$(basename "$c" .cubin)
        if [ "$c" = head ]; then ./bin/bench $sec > "$W/$st-$tag-r$r.md" 2>&1
        else ./bin/bench --cubin "$c" $sec > "$W/$st-$tag-r$r.md" 2>&1; fi
        echo "$st $tag r$r rc=$?"
      done; done ;;
    axis|gemv)
      # The runner's bench stage over the section, its three programs' tables in $W/$st/.
      t=; [ $st = gemv ] && t=chained
      BENCH_SECTIONS=$(sections $st) BENCH_OUT=$W/$st BENCH_TIMING=$t ./run.sh bench > "$W/$st.log" 2>&1
      echo "$st rc=$?"; tail -4 "$W/$st.log" ;;
    san)
      for s in ${SPECS:-}; do IFS=: read -r tool bin test <<< "$s"
        $SAN --tool $tool --error-exitcode 99 ./tests/$bin --exact $test --test-threads=1 > "$W/san-$tool-$bin-$test.log" 2>&1
        echo "san $tool $bin $test rc=$?"; tail -2 "$W/san-$tool-$bin-$test.log"
      done ;;
    trial)
      timeout "${TRIAL_S:-450}" bash "$ROOT/$TRIAL" "$W/trial" > "$W/trial.log" 2>&1
      echo "trial rc=$?"; tail -4 "$W/trial.log" ;;
  esac
pack; echo "  ($st $((SECONDS-t0)) s)"; done
