#!/usr/bin/env python3
"""Compares two sets of `bin/bench` outputs row by row: each row's fastest time over the runs of
set A against set B, as B / A (above 1: A is faster), with the geometric mean over the rows both
sets have.

    python3 bench_ab.py --a A1.md A2.md --b B1.md B2.md [--names A B] [--list N]

A row is keyed by its section and by every cell before its time column (the first whose header
holds "µs") but the `kernel` column, so that a row whose entry point changed is still compared
(both names are listed); rows whose time is not a number are left out.
"""
import argparse
import math

from peer_charts import number, tables


def rows(path):
    """{(section, key cells...): (µs, kernel)} of one bench output."""
    out = {}
    for title, header, table in tables(path):
        at = next((i for i, h in enumerate(header) if "µs" in h), None)
        if at is None:
            continue
        for row in table:
            us = number(row.get(header[at], ""))
            if us is not None:
                key = (title,) + tuple(row.get(h, "") for h in header[:at] if h != "kernel")
                out[key] = (us, row.get("kernel", ""))
    return out


def fastest(runs, key):
    """The fastest time of `key` over `runs`, and its kernel."""
    return min(r[key] for r in runs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--a", nargs="+", required=True, help="bench outputs of set A")
    ap.add_argument("--b", nargs="+", required=True, help="bench outputs of set B")
    ap.add_argument("--names", nargs=2, default=["A", "B"], help="the two sets' names")
    ap.add_argument("--list", type=int, default=10, help="rows listed at each end")
    args = ap.parse_args()
    a_runs, b_runs = [rows(p) for p in args.a], [rows(p) for p in args.b]
    keys = [k for k in a_runs[0] if all(k in r for r in a_runs + b_runs)]
    if not keys:
        raise SystemExit("no row is in every run")
    table = []
    for k in keys:
        (a, kernel_a), (b, kernel_b) = fastest(a_runs, k), fastest(b_runs, k)
        kernels = kernel_a if kernel_a == kernel_b else f"{kernel_a} / {kernel_b}"
        table.append((b / a, k + ((kernels,) if kernels else ()), a, b))
    table.sort()
    (name_a, name_b) = args.names
    geo = math.exp(sum(math.log(t[0]) for t in table) / len(table))
    print(f"{len(table)} rows; {name_b} / {name_a}, fastest of {len(a_runs)} and {len(b_runs)} runs: "
          f"geometric mean {geo:.3f}, {sum(t[0] > 1 for t in table)} rows where {name_a} is faster, "
          f"{sum(t[0] < 1 for t in table)} where {name_b} is\n")
    print(f"| section | row | {name_a} µs | {name_b} µs | {name_b} / {name_a} |\n|---|---|---|---|---|")
    shown = table[: args.list] + table[-args.list:] if len(table) > 2 * args.list else table
    for ratio, key, a, b in reversed(shown):
        print(f"| {key[0][:48]} | {' '.join(key[1:])} | {a:.1f} | {b:.1f} | {ratio:.3f} |")


if __name__ == "__main__":
    main()
