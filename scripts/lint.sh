#!/usr/bin/env bash
# House habits, on the stable toolchain (the pinned nightly has no rustfmt or clippy of today):
# formatting, clippy with warnings as errors on every crate that builds for the host, docs
# without warnings, and no import circles between source files. Each failure ends with one
# line naming the command that fixes or shows it.
set -uo pipefail
cd "$(dirname "$0")/.."
fail() { printf '\nlint: FAILED: %s\n' "$*" >&2; exit 1; }
consumer=examples/consumer/Cargo.toml
# Outside the workspace, formatted here (their clippy, docs and tests: scripts/cudarc_check.sh).
cudarc=(adapters/cudarc/Cargo.toml examples/cudarc_user/Cargo.toml)

# A missing tool is named as such, before any check could blame the code for it.
missing() { fail "a tool is missing: $1 (install it with \`$2\`, or run \`./x setup\`)"; }
cargo +stable --version >/dev/null 2>&1 \
    || missing "the stable toolchain" "rustup toolchain install stable --profile minimal -c rustfmt -c clippy"
for tool in fmt:rustfmt clippy:clippy; do
    cargo +stable "${tool%%:*}" --version >/dev/null 2>&1 \
        || missing "${tool#*:} for the stable toolchain" "rustup component add --toolchain stable ${tool#*:}"
done

echo "== cargo +stable fmt --check"
fmt_ok=1 fix="cargo +stable fmt --all"
cargo +stable fmt --all -- --check || fmt_ok=0
for m in "$consumer" "${cudarc[@]}"; do
    cargo +stable fmt --manifest-path "$m" -- --check || fmt_ok=0
    fix+=" && cargo +stable fmt --manifest-path $m"
done
[ "$fmt_ok" = 1 ] || fail "formatting differs from rustfmt.toml: run \`$fix\`"

echo "== cargo +stable clippy -D warnings"
cargo +stable clippy --quiet --workspace --all-targets --features cudakernels/internals -- -D warnings \
    || fail "clippy found warnings: run \`cargo +stable clippy --workspace --all-targets --features cudakernels/internals -- -D warnings\` and fix them"

echo "== cargo +stable doc (warnings are errors)"
RUSTDOCFLAGS="-D warnings" cargo +stable doc --quiet --no-deps -p cudakernels-host -p cudakernels \
    || fail "rustdoc found warnings: run \`RUSTDOCFLAGS='-D warnings' cargo +stable doc --no-deps -p cudakernels-host -p cudakernels\`"
echo "== layers (no file imports a file that imports it back)"
python3 scripts/check_layers.py host/src kernels/src src adapters/cudarc/src \
    || fail "an import circle: move what both files need into a file below both (scripts/check_layers.py)"
echo "lint: ok"
