#!/usr/bin/env python3
"""Where ptxas splits a batch of loads: for each basic block of each entry point's SASS with at
least MIN global loads, how many of them are issued before the first instruction that reads the
block's first load. A block printed as `0x15b0:2/4` issues 2 of its 4 loads, then waits on the
first. `thread::issue_loads_together` keeps a batch together where that costs time.

    python3 sass_load_batches.py CUBIN [ENTRY_REGEX] [MIN]

`cuobjdump` comes from `$CUOBJDUMP`, else the PATH (the PyPI package `nvidia-cuda-cuobjdump`
holds one). Volatile and strong loads (`LDG.E.STRONG`) are left out: they are the folds'
partials, read one by one on purpose.
"""
import os
import re
import subprocess
import sys

LOAD = re.compile(r"\bLDG\S*")
BRANCH = re.compile(r"\bBRA\b|\bBRA\.|\bEXIT\b|\bRET\b")
TARGET = re.compile(r"BRA(?:\.\S+)? (?:\S+, )?0x([0-9a-f]+)")
LINE = re.compile(r"\s+/\*([0-9a-f]{4,})\*/\s+(.*?);")


def plain_load(text):
    """Whether an instruction is a global load other than a strong (volatile) one."""
    return bool(LOAD.search(text)) and "STRONG" not in text


def functions(cubin):
    """(name, [(address, instruction)]) for each function of the cubin's SASS."""
    tool = os.environ.get("CUOBJDUMP", "cuobjdump")
    sass = subprocess.run([tool, "-sass", cubin], capture_output=True, text=True, check=True).stdout
    for part in re.split(r"\n\s+Function : ", sass)[1:]:
        name = part.split("\n")[0].strip()
        body = [(int(m.group(1), 16), m.group(2).strip()) for m in map(LINE.match, part.split("\n")) if m]
        yield name, body


def blocks(body):
    """The basic blocks of a function, (first address, instructions): cut after each branch and
    before each branch target."""
    targets = {int(m.group(1), 16) for _, text in body for m in [TARGET.search(text)] if m}
    start, cur = 0, []
    for address, text in body:
        if address in targets and cur:
            yield start, cur
            cur = []
        if not cur:
            start = address
        cur.append(text)
        if BRANCH.search(text):
            yield start, cur
            cur = []
    if cur:
        yield start, cur


def sources(text):
    """The registers an instruction reads (its predicate guard dropped; stores read them all)."""
    text = re.sub(r"^@!?U?P\w+\s+", "", text)
    regs = re.findall(r"\bR\d+\b", text.split(" ", 1)[1] if " " in text else "")
    return regs if text.startswith(("ST", "RED", "ATOM")) else regs[1:]


def split(block):
    """(loads before the first use of the first load's registers, loads in the block)."""
    loads = [i for i, text in enumerate(block) if plain_load(text)]
    first = block[loads[0]]
    reg = int(re.search(r"LDG\S* R(\d+)", first).group(1))
    width = 4 if ".128" in first else 2 if ".64" in first else 1
    regs = {f"R{reg + k}" for k in range(width)}
    use = next((i for i in range(loads[0] + 1, len(block)) if regs & set(sources(block[i]))), len(block))
    return sum(1 for i in loads if i < use), len(loads)


def main():
    cubin = sys.argv[1]
    wanted = re.compile(sys.argv[2] if len(sys.argv) > 2 else ".")
    least = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    for name, body in functions(cubin):
        if not wanted.search(name):
            continue
        found = []
        for start, block in blocks(body):
            if sum(1 for text in block if plain_load(text)) >= least:
                before, total = split(block)
                if before < total:
                    found.append(f"{start:#x}:{before}/{total}")
        if found:
            print(name, " ".join(found))


if __name__ == "__main__":
    main()
