#!/usr/bin/env bash
# Build a self-contained GPU test/bench bundle (no Rust toolchain needed to run it).
# Usage (from the repo root, after scripts/setup.sh):  bash scripts/bundle.sh [OUTDIR]   (default: bundle)
# Result: OUTDIR/{tests/*, bin/{cudakernels,bench,open_time,consumer,cudarc_user}, torch_peers.py, native_peers.cu,
# data/sgemv_shapes.csv (the peers read it at run time), run.sh}, and the same as OUTDIR.tar.xz to
# carry (unpack with `mkdir b && tar -C b -xJf OUTDIR.tar.xz`).
# On the GPU machine:  cd OUTDIR && REQUIRE_GPU=1 ./run.sh [tests|sanitizer|main|bench|all]
set -euo pipefail

OUTDIR="${1:-bundle}"
TARGET_DIR="${CARGO_TARGET_DIR:-target}"
rm -rf "$OUTDIR/tests" "$OUTDIR/bin" "$OUTDIR/data"
mkdir -p "$OUTDIR/tests" "$OUTDIR/bin" "$OUTDIR/data"

# Test binaries: compiler-artifact messages with profile.test and an executable.
# Names: integration test -> <target name>; lib unit tests of package P -> unit_<P>;
# bin unit tests -> unit_<bin>; on collision append _<package>.
PICK_TESTS=$(cat <<'PY'
import json, os, shutil, sys
dest = sys.argv[1]
used = set()
def pkg_name(pid):
    if " " in pid:                      # old cargo: "name 0.1.0 (path+file:///...)"
        return pid.split()[0]
    url, _, frag = pid.partition("#")   # new cargo: "path+file:///.../dir#[name@]0.1.0"
    return frag.split("@")[0] if "@" in frag else url.rstrip("/").rsplit("/", 1)[-1]
for line in sys.stdin:
    line = line.strip()
    if not line.startswith("{"):
        continue
    m = json.loads(line)
    if m.get("reason") != "compiler-artifact" or not m.get("executable"):
        continue
    if not m.get("profile", {}).get("test"):
        continue
    t, pkg = m["target"], pkg_name(m["package_id"])
    kinds = t.get("kind", [])
    if any(k in ("lib", "rlib", "cdylib", "dylib", "staticlib", "proc-macro") for k in kinds):
        name = "unit_" + pkg
    elif "bin" in kinds:
        name = "unit_" + t["name"]
    else:
        name = t["name"]
    if name in used:
        name = name + "_" + pkg
    base, i = name, 2
    while name in used:
        name, i = "%s_%d" % (base, i), i + 1
    used.add(name)
    shutil.copy2(m["executable"], os.path.join(dest, name))
    print("  test binary: %-24s <- %s" % (name, m["executable"]))
PY
)

echo "== cargo test --release --workspace --features cudakernels/from-source,cudakernels/internals --no-run"
cargo test --release --workspace --features cudakernels/from-source,cudakernels/internals --no-run --message-format=json | python3 -c "$PICK_TESTS" "$OUTDIR/tests"
# The binaries embed the build script's images. A target folder shared with another checkout can
# keep that checkout's (its build script's inputs look unchanged here): the images test, which
# runs without a GPU, refuses a bundle whose kernels are not this checkout's committed images.
"$OUTDIR/tests/images" --quiet >/dev/null 2>&1 || {
    echo "bundle: the built kernel images differ from kernels/images/: run ./x images, or touch kernels/src in a checkout sharing its target folder" >&2
    exit 1
}

echo "== cargo build --release --bins"
cargo build --release --features cudakernels/from-source,cudakernels/internals --bins
cp "$TARGET_DIR/release/cudakernels" "$TARGET_DIR/release/bench" "$TARGET_DIR/release/open_time" "$OUTDIR/bin/"

echo "== the stable consumer (examples/consumer), on the committed images"
bash scripts/consumer.sh build
cp "$TARGET_DIR/consumer/release/consumer" "$OUTDIR/bin/"

echo "== the cudarc adapter (adapters/cudarc) and its example (examples/cudarc_user), stable"
bash scripts/cudarc_check.sh build
cp "$TARGET_DIR/cudarc/release/cudarc_user" "$OUTDIR/bin/"
# The adapter's tests (tests/cudarc_gpu runs on the GPU), as the check above built them.
root=$PWD
(cd /tmp && CARGO_TARGET_DIR="$root/target/cudarc" CUDA_LIBRARY_PATH="${CUDA_LIBRARY_PATH:-$root/.deps/libcuda}" \
    cargo +stable test --release --no-run --message-format=json --manifest-path "$root/adapters/cudarc/Cargo.toml") \
    | python3 -c "$PICK_TESTS" "$OUTDIR/tests"

cp scripts/torch_peers.py scripts/native_peers.cu scripts/charts.py "$OUTDIR/"
cp data/sgemv_shapes.csv data/axis_shapes.csv data/gemv_shapes.csv "$OUTDIR/data/"
cp scripts/gpu_runner.sh "$OUTDIR/run.sh"
chmod +x "$OUTDIR/run.sh" "$OUTDIR"/bin/* "$OUTDIR"/tests/*

if command -v strip >/dev/null 2>&1; then
    for f in "$OUTDIR"/bin/* "$OUTDIR"/tests/*; do strip "$f" 2>/dev/null || true; done
else
    echo "warning: strip not found, binaries left unstripped" >&2
fi

# Every binary embeds the same kernel images: a dictionary larger than the whole bundle lets xz
# store them once (about 7 MB for 1.3 GB; decompressing takes that much memory). Preset 1 packs it
# in about a minute, 6 in about 15 at much the same size (XZ_PRESET to choose).
tar -C "$OUTDIR" -cf - . | xz -T1 --lzma2=preset=${XZ_PRESET:-1},dict=768MiB >"$OUTDIR.tar.xz"

echo "== bundle ready:"
ls -l "$OUTDIR" "$OUTDIR/bin" "$OUTDIR/tests"
du -sh "$OUTDIR" "$OUTDIR.tar.xz"
