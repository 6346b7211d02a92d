#!/usr/bin/env bash
# Runs the README's test command as a new user would: a fresh clone in a temporary folder, with
# RUSTUP_HOME and CARGO_HOME of its own (no toolchain installed), and reports the wall time.
#   bash scripts/fresh_check.sh                 fresh homes, nothing installed
#   bash scripts/fresh_check.sh --homes DIR     homes under DIR (kept: a second run there has
#                                               its toolchains, as a non-root user's homes do)
#   FRESH_KEEP=1 keeps the temporary clone for a look afterwards.
# The clone sits beside a `shared` link to this checkout's ../shared (the prebuilt LLVM 7), as
# the project's own checkouts do. The rustup that runs is the one on PATH; only its homes differ.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
homes=
case "${1:-}" in
    --homes) homes=${2:?--homes takes a folder}; mkdir -p "$homes"; homes=$(cd "$homes" && pwd) ;;
    "") ;;
    *) echo "usage: $0 [--homes DIR]" >&2; exit 2 ;;
esac
command -v rustup >/dev/null || { echo "fresh_check: FAILED: rustup is not on PATH" >&2; exit 1; }
# rustup's binary, not a proxy of the caller's homes, must be reachable once the homes change.
rustup_bin=$(dirname "$(command -v rustup)")

work=$(mktemp -d /tmp/fresh_check.XXXXXX)
[ "${FRESH_KEEP:-}" = 1 ] || trap 'rm -rf "$work"' EXIT
[ -n "$homes" ] || homes=$work/homes
export RUSTUP_HOME=$homes/rustup CARGO_HOME=$homes/cargo
mkdir -p "$RUSTUP_HOME" "$CARGO_HOME/bin"
# The proxies (cargo, rustc, rustup) are links to one rustup binary; the new CARGO_HOME gets its own.
for tool in rustup cargo rustc rustdoc cargo-fmt rustfmt cargo-clippy clippy-driver; do
    ln -sf "$(readlink -f "$rustup_bin/rustup")" "$CARGO_HOME/bin/$tool"
done
export PATH=$CARGO_HOME/bin:$(printf '%s' "$PATH" | tr ':' '\n' | grep -vxF "$rustup_bin" | paste -sd: -)
# The user's registry configuration (mirrors, proxies), as setup keeps it for its own cargo.
for f in config.toml config; do
    [ -f "${HOME}/.cargo/$f" ] && [ ! -f "$CARGO_HOME/$f" ] && cp "$HOME/.cargo/$f" "$CARGO_HOME/"
done
[ -d "$ROOT/../shared" ] && ln -s "$(cd "$ROOT/../shared" && pwd)" "$work/shared"
git clone --quiet "$ROOT" "$work/repo"
cd "$work/repo"
installed=$(rustup toolchain list 2>/dev/null | tr '\n' ' ')
echo "fresh_check: clone $work/repo at $(git rev-parse --short HEAD); RUSTUP_HOME=$RUSTUP_HOME CARGO_HOME=$CARGO_HOME"
echo "fresh_check: toolchains before: ${installed:-none}"
t0=$SECONDS
# The README's test command.
if ./x test; then
    echo "fresh_check: PASSED in $((SECONDS - t0)) s (./x test from a fresh clone)"
else
    rc=$?
    echo "fresh_check: FAILED (exit $rc) after $((SECONDS - t0)) s" >&2
    exit "$rc"
fi
