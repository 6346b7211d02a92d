#!/usr/bin/env python3
"""One table of a trial's Op::T rows: the µs of each (batch × m × n, types) under each
configuration, one cell a configuration with the rounds' times as 'round 1 / round 2'.

    python3 trial_table.py ROUND_DIR [ROUND_DIR ...]

Each folder holds `bin/bench` outputs named CONFIG-SHAPE.md (as the trial scripts write them:
`base-1x4096x4096.md`, `L8S8-1x4096x4096.md`); `base` comes first, then the configurations in
name order.
"""
import collections
import glob
import os
import re
import sys

from peer_charts import tables


def main(dirs):
    cells = collections.defaultdict(lambda: collections.defaultdict(list))
    configs = set()
    for d in dirs:
        for path in sorted(glob.glob(os.path.join(d, "*-*.md"))):
            config = os.path.basename(path)[:-3].split("-", 1)[0]
            configs.add(config)
            for _, header, rows in tables(path):
                if "op" not in header or "µs" not in header:
                    continue
                for r in (r for r in rows if r["op"] == "T"):
                    types = re.search(r"\((\w+)\)", r["types"])
                    types = types.group(1) if types else r["types"]
                    cells[(int(r["batch"]), int(r["m"]), int(r["n"]), types)][config].append(r["µs"])
    cols = sorted(configs, key=lambda k: (k != "base", k))
    print("| batch × m × n | types | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 2) + "|")
    for k in sorted(cells):
        row = " | ".join(" / ".join(cells[k][c]) for c in cols)
        print(f"| {k[0]} × {k[1]} × {k[2]} | {k[3]} | {row} |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
