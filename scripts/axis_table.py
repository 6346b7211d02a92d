#!/usr/bin/env python3
"""The table of reductions along an axis from one device call's markdown output: ours
(`bin/bench axis`), native CUB (`native_peers axis`) and torch (`torch_peers.py --only axis`), with
the faster peer over ours for each row, how many rows are below it, and how many of the rows
whose input is 64 MiB or more read below 90% of the copy rate (by the bytes they move).

Usage: python3 axis_table.py RESULTS_DIR
RESULTS_DIR holds bench.md, native.md and torch.md (the three programs' stdout).
"""
import os
import sys

from peer_charts import ELEMENT_BYTES, number, tables

SHORT = {"float32": "f32", "bfloat16": "bf16"}
# Issue 25's bandwidth target: at least 90% of the copy rate on every input of 64 MiB or more.
BIG_INPUT_BYTES, BIG_INPUT_COPY_PERCENT = 64 << 20, 90.0
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


def input_bytes(row):
    """The input's bytes: m × n elements for a matrix, else GB/s × µs (a segmented input)."""
    m, _, n = row["shape"].partition(" × ")
    if m.isdigit() and n.isdigit():
        return int(m) * int(n) * ELEMENT_BYTES[row["type"]]
    return number(row["GB/s"]) * number(row["median µs"]) * 1e3


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    results = sys.argv[1]
    others = peers(results)
    print("| shape | type | along | op | ours µs | % of same-size copy | % of copy rate, bytes moved | CUB µs | "
          "torch µs | best peer / ours |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    below = total = 0
    big, slow = 0, []
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
            rate = number(moved.rstrip("%"))
            if rate is not None and input_bytes(r) >= BIG_INPUT_BYTES:
                big += 1
                if rate < BIG_INPUT_COPY_PERCENT:
                    slow.append(f"{key[0]} {key[1]} {key[2]} {key[3]} ({moved})")
            print(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {ours:.1f} | {r['% of same-size copy']} | {moved} | "
                  f"{fmt('CUB')} | {fmt('torch')} | {shown} |")
    print(f"\n{below} of {total} rows with a peer are below the faster peer.")
    print(f"\n{len(slow)} of {big} rows of {BIG_INPUT_BYTES >> 20} MiB or more are below {BIG_INPUT_COPY_PERCENT:.0f}% "
          "of the copy rate by the bytes they move" + (": " + ", ".join(slow) + "." if slow else "."))


if __name__ == "__main__":
    main()
