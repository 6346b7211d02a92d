#!/usr/bin/env bash
# Next trial: the candidate (the Op::T block fold by warp butterflies and one split of four narrow
# tiles where the problems' tiles alone fill the SMs) against main. Run in the unpacked main
# bundle (b/) with the candidate's bundle unpacked in b/next/.
O=$1; mkdir -p $O
export REQUIRE_GPU=1 BENCH_TIMING=chained
SAN=/usr/local/cuda/bin/compute-sanitizer
for t in gpu_gemv_half gpu_sgemv_batched; do
  ./next/tests/$t --test-threads=4 > $O/test-$t.log 2>&1; echo "$t rc=$?"; tail -2 $O/test-$t.log
done
for tool in memcheck racecheck; do
  $SAN --tool $tool --error-exitcode 99 ./next/tests/gpu_gemv_half --exact \
    vector_kernels_at_every_width_alignment_and_batch --test-threads=1 > $O/$tool.log 2>&1
  echo "$tool rc=$?"; tail -2 $O/$tool.log
done
for r in 1 2; do
  ./bin/bench batched hgemv > $O/old-r$r.md 2>&1 || echo "FAIL old $r"
  ./next/bin/bench batched hgemv > $O/new-r$r.md 2>&1 || echo "FAIL new $r"
done
