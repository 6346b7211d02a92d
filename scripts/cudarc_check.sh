#!/usr/bin/env bash
# Builds the cudarc adapter (adapters/cudarc) and examples/cudarc_user, a cudarc application on
# it, with the current stable toolchain as a user would (each outside the library's workspace),
# checks their format, lints and the adapter's docs and unit tests, and runs the example.
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
    # Unit tests (no GPU) and the docs' examples, compiled.
    cargo +stable test --quiet --release --manifest-path "$adapter" || fail "adapter tests"
}

run() {
    local err rc
    err=$(mktemp)
    # The link-time libcuda only where no driver's libcuda is installed (CPU-only machines).
    if ldconfig -p 2>/dev/null | grep 'libcuda\.so\.1 ' >/dev/null; then "$bin" 2>"$err"; rc=$?
    else LD_LIBRARY_PATH=$CUDA_LIBRARY_PATH/lib64/stubs "$bin" 2>"$err"; rc=$?; fi
    cat "$err" >&2
    if [ "$rc" -eq 0 ]; then echo "cudarc_user: ok"; return 0; fi
    if [ "$rc" -eq 1 ] && grep -q '^error: no CUDA device was found' "$err"; then
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
