#!/usr/bin/env bash
# The packaging check (`./x test` runs it): packages every crate a user depends on (cudakernels,
# cudakernels-host, cudakernels-gpu, and the cudarc adapter cudakernels-cudarc, which lives outside
# the workspace) with the stable cargo, unpacks the .crate files into a folder outside the
# repository and builds examples/consumer's and examples/cudarc_user's sources against them
# alone, through `[patch.crates-io]` entries to the unpacked folders, then runs both as
# scripts/consumer.sh and scripts/cudarc_check.sh do.
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
# The adapter is outside the workspace: its lock resolves the unpublished cudakernels through a patch.
cargo +stable package --quiet --no-verify --allow-dirty --manifest-path "$ROOT/adapters/cudarc/Cargo.toml" \
    --config "patch.crates-io.cudakernels.path=\"$ROOT\"" --target-dir "$out" \
    2> >(grep -v '^warning: ignoring ' >&2) || fail "cargo package of the cudarc adapter"
patch=""
for c in $CRATES cudakernels-cudarc; do
    crate=$out/package/$c-0.1.0.crate
    [ -f "$crate" ] || fail "no $crate"
    size=$(stat -c %s "$crate")
    [ "$size" -le "$MAX_CRATE_BYTES" ] || fail "$crate is $size bytes, over the registry's $MAX_CRATE_BYTES"
    tar -xzf "$crate" -C "$work" || fail "unpacking $crate"
    patch+="$c = { path = \"$work/$c-0.1.0\" }"$'\n'
    echo "package check: $c-0.1.0.crate, $size bytes"
done

export CUDA_LIBRARY_PATH=${CUDA_LIBRARY_PATH:-$ROOT/.deps/libcuda}

# Builds example $1 (examples/$1's source) with the dependencies $2 from the packages alone into
# target/package-$1.
build_from_packages() {
    local name=$1 deps=$2 manifest inside
    mkdir -p "$work/$name" && cp -r "$ROOT/examples/$name/src" "$work/$name/"
    cat >"$work/$name/Cargo.toml" <<TOML
[package]
name = "$name"
version = "0.1.0"
edition = "2021"
publish = false

[dependencies]
$deps
[patch.crates-io]
$patch
[workspace]
TOML
    manifest=$work/$name/Cargo.toml
    CARGO_TARGET_DIR=$ROOT/target/package-$name cargo +stable build --quiet --release --manifest-path "$manifest" \
        || fail "building $name from the packages"
    # Every package in the build comes from the registry or from the unpacked .crate files.
    inside=$(cargo +stable metadata --format-version 1 --manifest-path "$manifest" \
        | python3 -c 'import json, sys; print("\n".join(p["manifest_path"] for p in json.load(sys.stdin)["packages"]))' \
        | grep "^$ROOT/")
    [ -z "$inside" ] || fail "$name built from files in the repository: $inside"
    echo "package check: $name built from the packaged crates alone"
}

build_from_packages consumer 'cudakernels = "=0.1.0"'
# The example's own cudarc names its CUDA version, so the adapter's default version is off.
cudarc_deps=$(sed -n '/^\[dependencies\]/,/^\[/p' "$ROOT/examples/cudarc_user/Cargo.toml" | grep -E '^(cudarc|half) ')
build_from_packages cudarc_user "cudakernels-cudarc = { version = \"=0.1.0\", default-features = false }
$cudarc_deps"
CONSUMER_BIN=$ROOT/target/package-consumer/release/consumer bash "$ROOT/scripts/consumer.sh" run
CUDARC_USER_BIN=$ROOT/target/package-cudarc_user/release/cudarc_user bash "$ROOT/scripts/cudarc_check.sh" run
