#!/usr/bin/env bash
# Regenerates the committed kernel images in kernels/images/ (the PTX and a SASS cubin per
# config::SASS_ARCHES) with the from-source build, which compiles kernels/ and runs ptxas.
# Run after any change under kernels/, then commit kernels/images/. (`./x images`)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=kernels/images
files="kernels.ptx kernels.sm_80.cubin kernels.sm_90.cubin" # config::SASS_ARCHES
mkdir -p "$dir"
# The from-source build embeds the committed images too (to compare them): let absent ones be empty.
for f in $files; do [ -e "$dir/$f" ] || : >"$dir/$f"; done
out=$(cargo build --release --features cudakernels/from-source,cudakernels/internals --message-format=json | python3 -c '
import json, sys
for line in sys.stdin:
    if line.startswith("{"):
        m = json.loads(line)
        if m.get("reason") == "build-script-executed" and m["package_id"].split()[0].split("#")[-1].startswith("cudakernels"):
            print(m["out_dir"])')
[ -n "$out" ] && [ -f "$out/kernels.ptx" ] || { echo "images: the from-source build left no kernels.ptx" >&2; exit 1; }
for f in $files; do cp "$out/$f" "$dir/"; done
ls -l "$dir"
