#!/usr/bin/env python3
"""Helpers for scripts/setup.sh: a local git crate index for the 2021 cargo.

  std-manifest LOCK        print a manifest with one optional dependency per registry
                           package of LOCK (the toolchain's rust-src Cargo.lock), so that
                           a current cargo caches their index entries too
  convert REGISTRY OUT     turn a current cargo's sparse-index cache (REGISTRY/index/*/.cache)
                           into a git-index tree at OUT, keeping only the entries the 2021
                           cargo can parse, with the cache's own config.json
"""
import json
import os
import re
import sys


def std_manifest(lock_path):
    names = []
    text = open(lock_path).read()
    for block in text.split("[[package]]")[1:]:
        name = re.search(r'^name = "([^"]+)"', block, re.M)
        source = re.search(r'^source = "registry\+', block, re.M)
        if name and source and name.group(1) not in names:
            names.append(name.group(1))
    out = ['[workspace]', '', '[package]', 'name = "std-index-fill"', 'version = "0.0.0"', 'edition = "2018"', '',
           '[dependencies]']
    out += ['d%d = { package = "%s", version = "*", optional = true }' % (i, n)
            for i, n in enumerate(names)]
    return "\n".join(out) + "\n"


def parse_cache_file(data):
    """A cache file is: cache-version byte, u32 index version, revision NUL,
    then (version NUL json NUL) pairs."""
    rest = data[5:]
    end = rest.index(b"\0")
    parts = rest[end + 1:].split(b"\0")
    return [parts[i + 1] for i in range(0, len(parts) - 1, 2)]


def old_cargo_can_parse(line):
    try:
        entry = json.loads(line)
    except ValueError:
        return False
    return entry.get("v", 1) == 1 and "features2" not in entry


def convert(registry, out):
    indexes = [os.path.join(registry, d) for d in sorted(os.listdir(registry))]
    indexes = [d for d in indexes if os.path.isdir(os.path.join(d, ".cache"))]
    if not indexes:
        sys.exit("no sparse-index cache under %s" % registry)
    os.makedirs(out)
    kept = dropped = crates = 0
    for index in indexes:
        cache = os.path.join(index, ".cache")
        for dirpath, _, files in os.walk(cache):
            for f in files:
                src = os.path.join(dirpath, f)
                lines = parse_cache_file(open(src, "rb").read())
                good = [l for l in lines if old_cargo_can_parse(l)]
                kept += len(good)
                dropped += len(lines) - len(good)
                if not good:
                    continue
                dst = os.path.join(out, os.path.relpath(src, cache))
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                with open(dst, "wb") as fh:
                    fh.write(b"\n".join(good) + b"\n")
                crates += 1
        config = os.path.join(index, "config.json")
        if os.path.isfile(config) and not os.path.exists(os.path.join(out, "config.json")):
            with open(config) as src_fh, open(os.path.join(out, "config.json"), "w") as fh:
                fh.write(src_fh.read())
    if not os.path.exists(os.path.join(out, "config.json")):
        sys.exit("the cache has no config.json")
    print("[setup] local index: %d crates, %d versions kept, %d dropped" % (crates, kept, dropped),
          file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "std-manifest":
        sys.stdout.write(std_manifest(sys.argv[2]))
    elif len(sys.argv) == 4 and sys.argv[1] == "convert":
        convert(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
