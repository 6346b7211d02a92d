#!/usr/bin/env python3
"""Charts from the benchmark CSV files: sgemv GB/s per shape (ours, cuBLAS, torch) for each op,
and the reduction ladder's steps. Also prints the sgemv summary table (markdown) with ratios.

Usage: python3 charts.py CSV_DIR [OUT_DIR]   (OUT_DIR defaults to CSV_DIR/charts)
Reads sgemv_ours.csv (bin/bench shapes), sgemv_cublas.csv (native_peers sgemv),
sgemv_torch.csv (torch_peers.py shapes) and ladder.csv (bin/bench ladder); missing files leave
their series out. Needs matplotlib.
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

KEY = ("m", "n", "lda", "a_off", "x_off", "op")


def read(path):
    if not os.path.exists(path):
        print(f"charts: {path} not found, left out")
        return []
    with open(path) as f:
        return list(csv.DictReader(f))


def by_key(rows):
    return {tuple(int(r[k]) if k != "op" else r[k] for k in KEY): r for r in rows}


def label(key):
    m, n, lda, a_off, x_off, _ = key
    fmt = lambda v: f"2^{v.bit_length() - 1}" if v >= 1 << 16 and v & (v - 1) == 0 else str(v)  # noqa: E731
    s = f"{fmt(m)}×{fmt(n)}"
    if lda != n:
        s += f" lda {lda}"
    if a_off or x_off:
        s += f" +({a_off},{x_off})"
    return s


def sgemv_charts(csv_dir, out_dir):
    ours, cublas, torch = (by_key(read(os.path.join(csv_dir, f"sgemv_{w}.csv"))) for w in ("ours", "cublas", "torch"))
    if not ours:
        return
    print("| shape | op | Auto kernel | ours µs | cuBLAS µs | torch µs | cuBLAS / ours | torch / ours | ours % of same-size copy |")
    print("|---|---|---|---|---|---|---|---|---|")
    for op in ("N", "T"):
        keys = [k for k in ours if k[5] == op]
        series = [("ours (Auto)", ours, "gbps", "cold_us"), ("cuBLAS", cublas, "gbps", "cold_us"),
                  ("torch.mv", torch, "gbps", "cold_us")]
        fig, ax = plt.subplots(figsize=(max(8, 0.55 * len(keys) + 2), 4.8))
        width = 0.8 / len(series)
        for i, (name, table, col, _) in enumerate(series):
            vals = [float(table[k][col]) if k in table else 0.0 for k in keys]
            ax.bar([j + (i - 1) * width for j in range(len(keys))], vals, width, label=name)
        ax.set_xticks(range(len(keys)))
        ax.set_xticklabels([label(k) for k in keys], rotation=60, ha="right", fontsize=8)
        ax.set_ylabel("GB/s (A + x + y once, cold)")
        ax.set_title(f"sgemv Op::{op}: y = α·{'A' if op == 'N' else 'Aᵀ'}·x, A row-major m×n")
        ax.legend()
        ax.grid(axis="y", alpha=0.3)
        fig.tight_layout()
        path = os.path.join(out_dir, f"sgemv_op_{op.lower()}.png")
        fig.savefig(path, dpi=90)
        plt.close(fig)
        print(f"<!-- wrote {path} -->")
        for k in keys:
            o = float(ours[k]["cold_us"])
            c = float(cublas[k]["cold_us"]) if k in cublas else None
            t = float(torch[k]["cold_us"]) if k in torch else None
            copy = float(ours[k]["copy_us"])
            print(f"| {label(k)} | {op} | {ours[k]['kernel']} | {o:.1f} | {c if c is None else f'{c:.1f}'} | "
                  f"{t if t is None else f'{t:.1f}'} | {'-' if c is None else f'{c / o:.2f}×'} | "
                  f"{'-' if t is None else f'{t / o:.2f}×'} | {100 * copy / o:.0f}% |")


def ladder_chart(csv_dir, out_dir):
    rows = read(os.path.join(csv_dir, "ladder.csv"))
    if not rows:
        return
    fig, ax = plt.subplots(figsize=(9, 4.8))
    for n in sorted({int(r["n"]) for r in rows}):
        sel = [r for r in rows if int(r["n"]) == n]
        ax.plot(range(len(sel)), [float(r["gbps"]) for r in sel], marker="o", label=f"n = 2^{n.bit_length() - 1}")
        ticks = [r["kernel"] for r in sel]
    ax.set_xticks(range(len(ticks)))
    ax.set_xticklabels(ticks, rotation=45, ha="right", fontsize=8)
    ax.set_ylabel("GB/s (cold)")
    ax.set_title("f32 sum: the reduction ladder, step by step")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    path = os.path.join(out_dir, "ladder.png")
    fig.savefig(path, dpi=90)
    plt.close(fig)
    print(f"<!-- wrote {path} -->")


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    csv_dir = sys.argv[1]
    out_dir = sys.argv[2] if len(sys.argv) > 2 else os.path.join(csv_dir, "charts")
    os.makedirs(out_dir, exist_ok=True)
    sgemv_charts(csv_dir, out_dir)
    ladder_chart(csv_dir, out_dir)


if __name__ == "__main__":
    main()
