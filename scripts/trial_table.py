#!/usr/bin/env python3
"""One table of a trial's Op::T rows: the µs of each (batch × m × n, types) under each
configuration, one cell a configuration with the rounds' times as 'round 1 / round 2'.

    python3 trial_table.py [--peers GEMV_DIR] ROUND_DIR [ROUND_DIR ...]

Each folder holds `bin/bench` outputs named CONFIG-SHAPE.md (as the trial scripts write them:
`base-1x4096x4096.md`, `L8S8-1x4096x4096.md`); `base` comes first, then the configurations in
name order. With `--peers`, a last column gives the faster peer's µs for the row from a gemv
stage's folder (native.md and torch.md, as `gemv_table.py` reads them).
"""
import collections
import glob
import os
import re
import sys

from gemv_table import peers as gemv_peers
from peer_charts import batch_shape, tables


def main(dirs, peer_dir=None):
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
    others = gemv_peers(peer_dir) if peer_dir else None
    extra = " best peer |" if others is not None else ""
    print("| batch × m × n | types | " + " | ".join(cols) + " |" + extra)
    print("|---" * (len(cols) + 2 + (others is not None)) + "|")
    for k in sorted(cells):
        row = " | ".join(" / ".join(cells[k][c]) for c in cols)
        if others is not None:
            times = [t for t in others.get((batch_shape(*k[:3]), "T", k[3]), {}).values() if t]
            row += f" | {min(times):.1f}" if times else " | -"
        print(f"| {k[0]} × {k[1]} × {k[2]} | {k[3]} | {row} |")


if __name__ == "__main__":
    args = sys.argv[1:]
    peer_dir = None
    if args[:1] == ["--peers"] and len(args) > 1:
        peer_dir, args = args[1], args[2:]
    if not args:
        sys.exit(__doc__)
    main(args, peer_dir)
