#!/usr/bin/env bash
# Builds examples/consumer, an application outside the workspace, with the current stable
# toolchain as a user would (no pinned nightly, no LLVM, no libnvvm: the prebuilt kernels), lints
# it, and runs it. Without a GPU it must print the no-device line and exit 1 (a SKIPPED line,
# or a failure with REQUIRE_GPU=1); with one it must exit 0.
#   bash scripts/consumer.sh [build|run]   (default: both)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
manifest=$ROOT/examples/consumer/Cargo.toml
export CARGO_TARGET_DIR=$ROOT/target/consumer
# What cust needs to link: a folder with lib64/stubs/libcuda.so (setup's, or a CUDA toolkit's).
export CUDA_LIBRARY_PATH=${CUDA_LIBRARY_PATH:-$ROOT/.deps/libcuda}
bin=${CONSUMER_BIN:-$CARGO_TARGET_DIR/release/consumer}

build() {
    # From outside the repository, so that none of its .cargo/config.toml applies.
    cd /tmp || exit 1
    local t0=$SECONDS
    cargo +stable build --release --manifest-path "$manifest" || { echo "consumer: FAILED: stable build"; exit 1; }
    echo "consumer: built on $(cargo +stable --version) in $((SECONDS - t0)) s"
    cargo +stable clippy --quiet --release --manifest-path "$manifest" -- -D warnings \
        || { echo "consumer: FAILED: clippy: run \`cargo +stable clippy --manifest-path $manifest -- -D warnings\`"; exit 1; }
}

run() {
    local err rc
    err=$(mktemp)
    # The link-time libcuda only where no driver's libcuda is installed (CPU-only machines).
    if ldconfig -p 2>/dev/null | grep 'libcuda\.so\.1 ' >/dev/null; then "$bin" 2>"$err"; rc=$?
    else LD_LIBRARY_PATH=$CUDA_LIBRARY_PATH/lib64/stubs "$bin" 2>"$err"; rc=$?; fi
    cat "$err" >&2
    if [ "$rc" -eq 0 ]; then echo "consumer: ok"; return 0; fi
    if [ "$rc" -eq 1 ] && grep -q '^error: no CUDA device was found' "$err"; then
        [ "${REQUIRE_GPU:-}" = 1 ] && { echo "consumer: FAILED: REQUIRE_GPU=1 but no CUDA device was found"; exit 1; }
        echo "SKIPPED consumer run: no CUDA device (it printed the no-device line and exited 1, as it must)"
        return 0
    fi
    echo "consumer: FAILED: exit $rc"; exit 1
}

case "${1:-all}" in
    build) build ;;
    run) run ;;
    all) build && run ;;
    *) echo "usage: $0 [build|run]" >&2; exit 2 ;;
esac
