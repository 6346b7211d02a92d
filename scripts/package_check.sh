#!/usr/bin/env bash
# The packaging check (`./x test` runs it): packages every crate a user depends on (cudakernels,
# cudakernels-host, cudakernels-gpu) with the stable cargo, unpacks the .crate files into a folder
# outside the repository and builds examples/consumer's source against them alone, through
# `[patch.crates-io]` entries to the unpacked folders, then runs it as scripts/consumer.sh does.
# `cargo package` runs with --no-verify: its own verify step would look the unpublished sibling
# crates up in the registry. The consumer build is the verification instead. --allow-dirty lets
# it check a working tree before it is committed.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
out=$ROOT/target/package-check
CRATES="cudakernels-gpu cudakernels-host cudakernels"
MAX_CRATE_BYTES=$((10 * 1024 * 1024)) # the registry's upload limit for one .crate file
work=$(mktemp -d /tmp/cudakernels-packaged.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "package check: FAILED: $*"; exit 1; }

# From outside the repository, so that its .cargo/config.toml (the local index) does not apply.
cd /tmp || exit 1
rm -f "$out"/package/*.crate
args=(); for c in $CRATES; do args+=(-p "$c"); done
cargo +stable package --quiet --no-verify --allow-dirty --manifest-path "$ROOT/Cargo.toml" "${args[@]}" \
    --target-dir "$out" 2> >(grep -v '^warning: ignoring ' >&2) || fail "cargo package"
patch=""
for c in $CRATES; do
    crate=$out/package/$c-0.1.0.crate
    [ -f "$crate" ] || fail "no $crate"
    size=$(stat -c %s "$crate")
    [ "$size" -le "$MAX_CRATE_BYTES" ] || fail "$crate is $size bytes, over the registry's $MAX_CRATE_BYTES"
    tar -xzf "$crate" -C "$work" || fail "unpacking $crate"
    patch+="$c = { path = \"$work/$c-0.1.0\" }"$'\n'
    echo "package check: $c-0.1.0.crate, $size bytes"
done

mkdir -p "$work/consumer" && cp -r "$ROOT/examples/consumer/src" "$work/consumer/"
cat >"$work/consumer/Cargo.toml" <<TOML
[package]
name = "consumer"
version = "0.1.0"
edition = "2021"
publish = false

[dependencies]
cudakernels = "=0.1.0"

[patch.crates-io]
$patch
[workspace]
TOML
manifest=$work/consumer/Cargo.toml
export CARGO_TARGET_DIR=$ROOT/target/package-consumer
export CUDA_LIBRARY_PATH=${CUDA_LIBRARY_PATH:-$ROOT/.deps/libcuda}
cargo +stable build --quiet --release --manifest-path "$manifest" || fail "building the consumer from the packages"
# Every package in the build comes from the registry or from the unpacked .crate files.
inside=$(cargo +stable metadata --format-version 1 --manifest-path "$manifest" \
    | python3 -c 'import json, sys; print("\n".join(p["manifest_path"] for p in json.load(sys.stdin)["packages"]))' \
    | grep "^$ROOT/")
[ -z "$inside" ] || fail "the consumer built from files in the repository: $inside"
echo "package check: the consumer built from the packaged crates alone"
CONSUMER_BIN=$CARGO_TARGET_DIR/release/consumer bash "$ROOT/scripts/consumer.sh" run
