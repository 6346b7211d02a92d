#!/usr/bin/env python3
"""Registers and spill stores per entry point of two PTX builds, from the pinned ptxas (sm_90):
the entries whose counts differ, as `entry OLD -> NEW` (`entry!spill` for spill-store bytes).
A kernel trial's first check: registers decide the blocks a SM, and a spill is local memory.

    python3 ptx_registers.py OLD.ptx NEW.ptx [ENTRY_REGEX]

ptxas comes from `$PTXAS`, else the pinned one named in the setup's `.cargo/config.toml`.
"""
import os
import re
import subprocess
import sys

ENTRY = re.compile(r"Compiling entry function '(\w+)'")
USED = re.compile(r"Used (\d+) registers")
SPILL = re.compile(r"(\d+) bytes spill stores")


def ptxas():
    """The pinned ptxas: `$PTXAS`, else the `PTXAS` that `scripts/setup.sh` writes into
    `.cargo/config.toml` (the one `tests/ptx.rs` and the build use)."""
    if os.environ.get("PTXAS"):
        return os.environ["PTXAS"]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    config = os.path.join(root, ".cargo", "config.toml")
    found = re.search(r'^PTXAS = "(.*)"$', open(config).read(), re.M) if os.path.exists(config) else None
    if not found:
        sys.exit("ptx_registers: no ptxas (run ./x setup, or set PTXAS)")
    return found.group(1)


def counts(ptx):
    """{entry: registers, entry + '!spill': spill-store bytes where any} of one PTX file."""
    log = subprocess.run([ptxas(), "-arch=sm_90", "-v", ptx, "-o", os.devnull],
                         capture_output=True, text=True, check=True).stderr
    got, entry = {}, None
    for line in log.splitlines():
        m = ENTRY.search(line)
        if m:
            entry = m.group(1)
        m = USED.search(line)
        if m and entry:
            got[entry] = int(m.group(1))
        m = SPILL.search(line)
        if m and entry and int(m.group(1)) > 0:
            got[entry + "!spill"] = int(m.group(1))
    return got


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    wanted = re.compile(sys.argv[3] if len(sys.argv) == 4 else ".")
    old, new = counts(sys.argv[1]), counts(sys.argv[2])
    changed = [k for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k) and wanted.search(k)]
    for k in changed:
        print(k, old.get(k), "->", new.get(k))
    entries = [k for k in new if "!" not in k and wanted.search(k)]
    print(f"{len(changed)} changed of {len(entries)} entries")


if __name__ == "__main__":
    main()
