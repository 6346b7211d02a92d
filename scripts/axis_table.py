#!/usr/bin/env python3
"""The table of reductions along an axis from one device call's markdown output: ours
(`bin/bench axis`), native CUB (`native_peers axis`) and torch (`torch_peers.py --only axis`), with
the faster peer over ours for each row and how many rows are below it.

Usage: python3 axis_table.py RESULTS_DIR
RESULTS_DIR holds bench.md, native.md and torch.md (the three programs' stdout).
"""
import os
import sys

from peer_charts import number, tables

SHORT = {"float32": "f32", "bfloat16": "bf16"}
# torch's max(dim) gives values and indices, as our argmax rows; argmax(dim) the indices alone.
TORCH_OPS = {"sum": "sum", "amax": "max", "max": "argmax", "argmax": "argmax indices"}


def peers(results):
    """{(shape, type, along, op): {who: µs}} of CUB and torch."""
    got = {}
    for _, _, rows in tables(os.path.join(results, "native.md")):
        for r in rows:
            what, shape = r.get("what", ""), r.get("shape", "")
            if "DeviceSegmentedReduce" not in what:
                continue
            op = {"Sum": "sum", "Max": "max", "ArgMax": "argmax"}[what.split("::")[-1]]
            along = "rows" if shape.endswith(" rows") else "segments"
            key = (shape[: -len(" rows")] if along == "rows" else shape, SHORT.get(r["type"], r["type"]), along, op)
            got.setdefault(key, {})["CUB"] = number(r["median µs"])
    for _, _, rows in tables(os.path.join(results, "torch.md")):
        for r in rows:
            what = r.get("what", "")
            if what.startswith("segment_reduce("):
                key = (r["shape"], SHORT.get(r["dtype"]), "segments", what[len("segment_reduce("):-1])
            elif what.startswith("x.") and "(dim=" in what:
                op = TORCH_OPS.get(what[2:what.index("(")])
                along = "rows" if "dim=1" in what else "cols"
                key = (r["shape"], SHORT.get(r["dtype"]), along, op)
            else:
                continue
            got.setdefault(key, {})["torch"] = number(r["median µs"])
    return got


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    results = sys.argv[1]
    others = peers(results)
    print("| shape | type | along | op | ours µs | % of same-size copy | % of copy rate, bytes moved | CUB µs | "
          "torch µs | best peer / ours |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    below = total = 0
    for title, _, rows in tables(os.path.join(results, "bench.md")):
        if not title.startswith("Reductions along an axis"):
            continue
        for r in rows:
            along = r["along"].split(" ")[0].replace("columns", "cols")
            key = (r["shape"].replace(" × ", "x"), r["type"], along, r["op"])
            ours = number(r["median µs"])
            peer = others.get(key, {})
            times = [t for t in peer.values() if t]
            ratio = min(times) / ours if times and ours else None
            total += ratio is not None
            below += ratio is not None and ratio < 1.0
            fmt = lambda who: f"{peer[who]:.1f}" if peer.get(who) else "-"  # noqa: E731
            shown = f"{ratio:.2f}×" if ratio is not None else "-"
            moved = r.get("% of copy rate, bytes moved", "-")
            print(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {ours:.1f} | {r['% of same-size copy']} | {moved} | "
                  f"{fmt('CUB')} | {fmt('torch')} | {shown} |")
    print(f"\n{below} of {total} rows with a peer are below the faster peer.")


if __name__ == "__main__":
    main()
