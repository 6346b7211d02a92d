#!/usr/bin/env bash
# Idempotent setup for the 2021 rust-cuda stack on a fresh Debian machine.
# Everything it makes lives under .deps/ and .cargo/config.toml (both git-ignored).
# Steps: pinned toolchain, LLVM 7, CUDA 11.8 libnvvm + headers, a link-time libcuda,
# a local git crate index for the 2021 cargo, and the generated cargo config.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DEPS=$ROOT/.deps
TOOLCHAIN=$(sed -n 's/^channel *= *"\(.*\)"/\1/p' "$ROOT/rust-toolchain.toml")
CUDA_WHEEL_VERSION=11.8.89
PTXAS_WHEEL_VERSION=12.9.86
LLVM_VERSION=7.1.0
LLVM7_SHA256=0c07ee71086b44343b26318852bba0c31e29815be374febd276efd1037d6f312
: "${LLVM7_TARBALL:=$ROOT/../shared/toolchains/llvm-$LLVM_VERSION-nvptx-x86_64-linux-gnu.tar.xz}"

say() { printf '[setup] %s\n' "$*" >&2; }
die() { printf '[setup] ERROR: %s\n' "$*" >&2; exit 1; }
need() { command -v "$1" >/dev/null 2>&1 || die "'$1' is required but not installed${2:+ ($2)}"; }

mkdir -p "$DEPS"
need rustup "install rustup first: see README"
need python3
need git

# 1. Toolchains: the pinned nightly for the build, a current stable cargo for the index.
install_toolchains() {
    local comps=(rust-src rustc-dev llvm-tools-preview) missing=()
    if rustup toolchain list | grep "^$TOOLCHAIN" >/dev/null; then
        local have; have=$(rustup component list --installed --toolchain "$TOOLCHAIN")
        for c in "${comps[@]}"; do grep -q "^$c" <<<"$have" || missing+=("$c"); done
        if [ ${#missing[@]} -gt 0 ]; then
            say "adding components ${missing[*]} to $TOOLCHAIN"
            rustup component add --toolchain "$TOOLCHAIN" "${missing[@]}"
        fi
    else
        say "installing toolchain $TOOLCHAIN"
        rustup toolchain install "$TOOLCHAIN" --profile minimal "${comps[@]/#/-c}"
    fi
    # Stable: its cargo fills the crate index cache; its rustfmt and clippy run the lint step.
    if ! rustup run stable cargo --version >/dev/null 2>&1; then
        say "installing a stable toolchain with rustfmt and clippy"
        rustup toolchain install stable --profile minimal -c rustfmt -c clippy
    fi
    local tools=(rustfmt clippy) have_stable absent=()
    have_stable=$(rustup component list --installed --toolchain stable)
    for c in "${tools[@]}"; do grep -q "^$c" <<<"$have_stable" || absent+=("$c"); done
    if [ ${#absent[@]} -gt 0 ]; then
        say "adding ${absent[*]} to the stable toolchain (the lint step runs them)"
        rustup component add --toolchain stable "${absent[@]}"
    fi
}

# 2. LLVM 7 for rustc_codegen_nvvm: $LLVM_CONFIG, else the prebuilt tarball, else a source build.
llvm_is_7() { [ -x "$1" ] && [[ "$("$1" --version 2>/dev/null)" == 7.* ]]; }
setup_llvm() {
    if [ -n "${LLVM_CONFIG:-}" ]; then
        llvm_is_7 "$LLVM_CONFIG" || die "LLVM_CONFIG=$LLVM_CONFIG is not an LLVM 7.x llvm-config"
        LLVM_CONFIG_PATH=$LLVM_CONFIG; return
    fi
    LLVM_CONFIG_PATH=$DEPS/llvm-$LLVM_VERSION-nvptx/bin/llvm-config
    llvm_is_7 "$LLVM_CONFIG_PATH" && return
    if [ -f "$LLVM7_TARBALL" ]; then
        say "unpacking prebuilt LLVM $LLVM_VERSION from $LLVM7_TARBALL"
        echo "$LLVM7_SHA256  $LLVM7_TARBALL" | sha256sum -c --quiet - || die "checksum mismatch for $LLVM7_TARBALL"
        tar -C "$DEPS" -xJf "$LLVM7_TARBALL"
    else
        build_llvm_from_source
    fi
    llvm_is_7 "$LLVM_CONFIG_PATH" || die "no usable llvm-config at $LLVM_CONFIG_PATH"
}
build_llvm_from_source() {
    say "no LLVM 7 found (set LLVM_CONFIG or LLVM7_TARBALL to skip this); building LLVM $LLVM_VERSION (NVPTX only, ~35 min on 2 cores)"
    need cmake "apt-get install cmake"; need ninja "apt-get install ninja-build"; need curl
    local src=$DEPS/llvm-src url=${LLVM_SOURCE_URL:-https://github.com/llvm/llvm-project/releases/download/llvmorg-$LLVM_VERSION/llvm-$LLVM_VERSION.src.tar.xz}
    mkdir -p "$src/build"
    [ -f "$src/llvm.tar.xz" ] || curl -fL "$url" -o "$src/llvm.tar.xz" || die "could not download $url"
    tar -C "$src" -xJf "$src/llvm.tar.xz" --strip-components=1
    (cd "$src/build" && cmake -G Ninja .. -DCMAKE_BUILD_TYPE=Release -DLLVM_TARGETS_TO_BUILD=NVPTX \
        -DLLVM_ENABLE_ASSERTIONS=OFF -DLLVM_ENABLE_BINDINGS=OFF -DLLVM_INCLUDE_EXAMPLES=OFF \
        -DLLVM_INCLUDE_TESTS=OFF -DLLVM_INCLUDE_BENCHMARKS=OFF -DLLVM_INCLUDE_DOCS=OFF \
        -DLLVM_ENABLE_ZLIB=OFF -DLLVM_ENABLE_TERMINFO=OFF -DLLVM_ENABLE_LIBXML2=OFF \
        -DLLVM_ENABLE_LIBEDIT=OFF -DLLVM_ENABLE_FFI=OFF -DLLVM_BUILD_TOOLS=OFF -DLLVM_INCLUDE_UTILS=OFF \
        -DPYTHON_EXECUTABLE="$(command -v python3)" -DCMAKE_INSTALL_PREFIX="$DEPS/llvm-$LLVM_VERSION-nvptx" \
        && ninja install)
}

# 3. CUDA 11.x libnvvm, libdevice and cuda.h: an installed 11.x toolkit, else PyPI wheels.
cuda_is_11() { [ -f "$1/include/cuda.h" ] && [ -f "$1/nvvm/lib64/libnvvm.so" ] && grep -q 'define CUDA_VERSION 11' "$1/include/cuda.h"; }
setup_cuda() {
    local c
    for c in "${CUDA_PATH:-}" /usr/local/cuda /opt/cuda; do
        if [ -n "$c" ] && cuda_is_11 "$c"; then CUDA_ROOT=$c; say "using CUDA 11 toolkit at $c"; return; fi
    done
    CUDA_ROOT=$DEPS/cuda
    [ -f "$CUDA_ROOT/.complete" ] && return
    say "assembling CUDA $CUDA_WHEEL_VERSION libnvvm/libdevice/headers from PyPI into $CUDA_ROOT"
    rm -rf "$CUDA_ROOT" "$DEPS/wheels"
    python3 -m pip download --quiet --no-deps --only-binary=:all: --platform manylinux2014_x86_64 \
        --python-version 3.11 -d "$DEPS/wheels" \
        "nvidia-cuda-nvcc-cu11==$CUDA_WHEEL_VERSION" "nvidia-cuda-runtime-cu11==$CUDA_WHEEL_VERSION" \
        || die "pip could not download the CUDA 11.8 wheels"
    python3 - "$DEPS/wheels" "$DEPS/wheels/x" <<'PY'
import sys, zipfile, glob
for w in glob.glob(sys.argv[1] + "/*.whl"):
    zipfile.ZipFile(w).extractall(sys.argv[2])
PY
    local n=$DEPS/wheels/x/nvidia
    mkdir -p "$CUDA_ROOT/nvvm/lib64" "$CUDA_ROOT/nvvm/libdevice" "$CUDA_ROOT/lib64/stubs"
    cp -r "$n/cuda_runtime/include" "$CUDA_ROOT/include"
    cp "$n"/cuda_nvcc/nvvm/lib64/libnvvm.so* "$CUDA_ROOT/nvvm/lib64/"
    ln -sf libnvvm.so "$CUDA_ROOT/nvvm/lib64/libnvvm.so.4"
    cp "$n"/cuda_nvcc/nvvm/libdevice/libdevice.10.bc "$CUDA_ROOT/nvvm/libdevice/"
    rm -rf "$DEPS/wheels"
    touch "$CUDA_ROOT/.complete"
}

# 3b. The ptxas that assembles the committed SASS cubins from the PTX: pinned, since the images
# must be byte-identical wherever they are rebuilt. CUDA 12.9's (11.8's ran up to 1.5x slower).
setup_ptxas() {
    PTXAS_PATH=$DEPS/ptxas-$PTXAS_WHEEL_VERSION/ptxas
    [ -x "$PTXAS_PATH" ] && return
    say "fetching ptxas $PTXAS_WHEEL_VERSION from PyPI (nvidia-cuda-nvcc-cu12)"
    local w=$DEPS/ptxas-wheel
    rm -rf "$w"
    python3 -m pip download --quiet --no-deps --only-binary=:all: --platform manylinux2014_x86_64 \
        --python-version 3.11 -d "$w" "nvidia-cuda-nvcc-cu12==$PTXAS_WHEEL_VERSION" \
        || die "pip could not download nvidia-cuda-nvcc-cu12==$PTXAS_WHEEL_VERSION"
    python3 - "$w" "$(dirname "$PTXAS_PATH")" <<'PY'
import glob, os, sys, zipfile
(wheel,) = glob.glob(sys.argv[1] + "/*.whl")
os.makedirs(sys.argv[2], exist_ok=True)
with zipfile.ZipFile(wheel) as z, open(sys.argv[2] + "/ptxas", "wb") as out:
    out.write(z.read("nvidia/cuda_nvcc/bin/ptxas"))
PY
    chmod 755 "$PTXAS_PATH"
    rm -rf "$w"
    # Captured first: with pipefail, `grep -q` closing the pipe early can fail the check.
    local version
    version=$("$PTXAS_PATH" --version) || die "$PTXAS_PATH does not run"
    [[ $version == *"release ${PTXAS_WHEEL_VERSION%.*}"* ]] || die "$PTXAS_PATH is not ptxas $PTXAS_WHEEL_VERSION"
}

# 4. libcuda.so to link against: the driver's own where one is installed, else Debian's libcuda1.
driver_libcuda() { ldconfig -p 2>/dev/null | awk '/libcuda\.so\.1 .*x86-64/{print $NF; exit}'; }
setup_libcuda() {
    local stubs=$DEPS/libcuda/lib64/stubs drv
    LIBCUDA_ROOT=$DEPS/libcuda
    [ -e "$stubs/libcuda.so" ] && return
    mkdir -p "$stubs"
    drv=$(driver_libcuda)
    if [ -n "$drv" ]; then
        say "linking against the installed driver's $drv"
        ln -sf "$drv" "$stubs/libcuda.so"; return
    fi
    say "no NVIDIA driver here: fetching Debian's libcuda1 (link-time and CPU-only test use only)"
    need apt-get; need dpkg
    local uri apt=$DEPS/apt
    uri=$( { grep -hE '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}';
             grep -hE '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | awk '{print $2}'; } \
           | grep -E '/debian/?$' | head -n1 || true)
    [ -n "$uri" ] || die "could not read a Debian mirror URI from this machine's apt sources"
    mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/pkg"
    echo "deb $uri bookworm main contrib non-free" >"$apt/sources.list"
    local o=(-o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/nonexistent
             -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o Debug::NoLocking=1 -o APT::Sandbox::User=root)
    apt-get "${o[@]}" -qq update || die "apt-get update (private sources list) failed"
    (cd "$apt/pkg" && apt-get "${o[@]}" -qq download libcuda1) || die "apt-get download libcuda1 failed"
    dpkg -x "$apt"/pkg/libcuda1_*.deb "$apt/x"
    cp "$(ls "$apt"/x/usr/lib/x86_64-linux-gnu/nvidia/current/libcuda.so.*.* | head -n1)" "$stubs/libcuda.so.1"
    ln -sf libcuda.so.1 "$stubs/libcuda.so"
    rm -rf "$apt"
}

# 5. A local git index for the 2021 cargo, converted from a current cargo's sparse cache.
setup_index() {
    local sysroot stdlock stamp
    sysroot=$(rustup run "$TOOLCHAIN" rustc --print sysroot)
    stdlock=$sysroot/lib/rustlib/src/rust/Cargo.lock
    [ -f "$stdlock" ] || die "rust-src is missing from $TOOLCHAIN ($stdlock)"
    stamp=$(cat "$ROOT/Cargo.lock" "$stdlock" "$ROOT/scripts/make_local_index.py" | sha256sum | cut -c1-16)
    INDEX=$DEPS/local-index
    [ "$(cat "$INDEX/.stamp" 2>/dev/null)" = "$stamp" ] && return
    say "building the local crate index (current cargo fills its cache, then it is converted)"
    local home=$DEPS/cargo-stable ws; ws=$(mktemp -d)
    mkdir -p "$home"
    # Keep the user's own registry configuration (mirrors, proxies) for the current cargo.
    local user_home=${CARGO_HOME:-$HOME/.cargo} f
    for f in config.toml config credentials.toml; do [ -f "$user_home/$f" ] && cp "$user_home/$f" "$home/"; done
    # A copy of the workspace outside this tree, so that the generated source replacement doesn't apply.
    rm -rf "$ws"; mkdir -p "$ws/project" "$ws/std"
    tar -C "$ROOT" --exclude=./target --exclude=./.deps --exclude=./.cargo --exclude=./.git --exclude=./bundle -cf - . | tar -C "$ws/project" -xf -
    # cargo reads configuration from the working directory, so run it from inside the copies.
    (cd "$ws/project" && CARGO_HOME=$home rustup run stable cargo fetch --quiet) \
        || die "the current cargo could not fetch the crates of Cargo.lock"
    python3 "$ROOT/scripts/make_local_index.py" std-manifest "$stdlock" >"$ws/std/Cargo.toml"
    mkdir -p "$ws/std/src"; : >"$ws/std/src/lib.rs"
    (cd "$ws/std" && CARGO_HOME=$home rustup run stable cargo generate-lockfile --quiet) \
        || die "the current cargo could not resolve the std library's crates"
    rm -rf "$INDEX"
    python3 "$ROOT/scripts/make_local_index.py" convert "$home/registry/index" "$INDEX"
    git -C "$INDEX" init -q
    git -C "$INDEX" add -A
    git -C "$INDEX" -c user.name=setup -c user.email=setup@localhost commit -qm "local index"
    echo "$stamp" >"$INDEX/.stamp"
    rm -rf "$ws"
}

# 6. The generated cargo config: source replacement, [env], and a run path for libnvvm/libcuda.
write_cargo_config() {
    mkdir -p "$ROOT/.cargo"
    cat >"$ROOT/.cargo/config.toml" <<EOF
# Generated by scripts/setup.sh; do not edit or commit.
[source.crates-io]
replace-with = "local-index"

[source.local-index]
registry = "file://$INDEX"

[env]
CUDA_PATH = "$CUDA_ROOT"
CUDA_LIBRARY_PATH = "$LIBCUDA_ROOT:$CUDA_ROOT"
LLVM_CONFIG = "$LLVM_CONFIG_PATH"
PTXAS = "$PTXAS_PATH"

[target.x86_64-unknown-linux-gnu]
rustflags = ["-C", "link-arg=-Wl,-rpath,$CUDA_ROOT/nvvm/lib64:$LIBCUDA_ROOT/lib64/stubs"]
EOF
}

install_toolchains
setup_llvm
setup_cuda
setup_ptxas
setup_libcuda
setup_index
write_cargo_config
say "ready: toolchain $TOOLCHAIN, LLVM $("$LLVM_CONFIG_PATH" --version), CUDA root $CUDA_ROOT"
