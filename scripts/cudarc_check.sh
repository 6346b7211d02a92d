#!/usr/bin/env bash
# Builds the cudarc adapter (adapters/cudarc) and examples/cudarc_user, a cudarc application on
# it, with the current stable toolchain as a user would (each outside the library's workspace),
# checks their format, lints, the adapter's docs and its tests (the GPU ones skip without a GPU),
# and runs the example.
# Without a GPU it must print the no-device line and exit 1 (a SKIPPED line, or a failure with
# REQUIRE_GPU=1); with one it must exit 0.
#   bash scripts/cudarc_check.sh [build|run]   (default: both)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
adapter=$ROOT/adapters/cudarc/Cargo.toml
example=$ROOT/examples/cudarc_user/Cargo.toml
export CARGO_TARGET_DIR=$ROOT/target/cudarc
# What cust needs to link: a folder with lib64/stubs/libcuda.so (setup's, or a CUDA toolkit's).
export CUDA_LIBRARY_PATH=${CUDA_LIBRARY_PATH:-$ROOT/.deps/libcuda}
bin=${CUDARC_USER_BIN:-$CARGO_TARGET_DIR/release/cudarc_user}
fail() { echo "cudarc: FAILED: $*"; exit 1; }
# Runs a command with a libcuda to load: the driver's, else the link-time one (CPU-only machines).
with_libcuda() {
    if ldconfig -p 2>/dev/null | grep 'libcuda\.so\.1 ' >/dev/null; then "$@"
    else LD_LIBRARY_PATH=$CUDA_LIBRARY_PATH/lib64/stubs "$@"; fi
}

build() {
    # From outside the repository, so that none of its .cargo/config.toml applies.
    cd /tmp || exit 1
    local t0=$SECONDS m
    for m in "$adapter" "$example"; do
        cargo +stable fmt --manifest-path "$m" -- --check \
            || fail "formatting differs from rustfmt.toml: run \`cargo +stable fmt --manifest-path $m\`"
    done
    cargo +stable build --release --manifest-path "$example" || fail "stable build of the example"
    echo "cudarc: built on $(cargo +stable --version) in $((SECONDS - t0)) s"
    for m in "$adapter" "$example"; do
        cargo +stable clippy --quiet --release --all-targets --manifest-path "$m" -- -D warnings \
            || fail "clippy: run \`cargo +stable clippy --all-targets --manifest-path $m -- -D warnings\`"
    done
    RUSTDOCFLAGS="-D warnings" cargo +stable doc --quiet --no-deps --manifest-path "$adapter" \
        || fail "rustdoc: run \`RUSTDOCFLAGS='-D warnings' cargo +stable doc --no-deps --manifest-path $adapter\`"
    # Unit tests, the docs' examples (compiled) and tests/cudarc_gpu.rs, whose tests print a
    # SKIPPED line each without a GPU (the run below is what REQUIRE_GPU=1 fails).
    local out skipped
    out=$(REQUIRE_GPU='' with_libcuda cargo +stable test --quiet --release --manifest-path "$adapter" -- --nocapture 2>&1) \
        || { echo "$out"; fail "adapter tests: run \`cargo +stable test --release --manifest-path $adapter\`"; }
    skipped=$(grep -o 'SKIPPED' <<<"$out" | wc -l)
    if [ "$skipped" -gt 0 ]; then echo "SKIPPED $skipped adapter GPU tests: no CUDA device"
    else echo "cudarc: adapter tests passed"; fi
}

run() {
    local err rc
    err=$(mktemp)
    with_libcuda "$bin" 2>"$err"; rc=$?
    cat "$err" >&2
    grep -q '^error: no CUDA device was found' "$err"; local no_device=$?
    rm -f "$err"
    if [ "$rc" -eq 0 ]; then echo "cudarc_user: ok"; return 0; fi
    if [ "$rc" -eq 1 ] && [ "$no_device" -eq 0 ]; then
        [ "${REQUIRE_GPU:-}" = 1 ] && fail "REQUIRE_GPU=1 but no CUDA device was found"
        echo "SKIPPED cudarc_user run: no CUDA device (it printed the no-device line and exited 1, as it must)"
        return 0
    fi
    fail "cudarc_user exited $rc"
}

case "${1:-all}" in
    build) build ;;
    run) run ;;
    all) build && run ;;
    *) echo "usage: $0 [build|run]" >&2; exit 2 ;;
esac
