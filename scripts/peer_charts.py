#!/usr/bin/env python3
"""Charts of the ML-data workloads from one device call's markdown output: ours (bin/bench), native
CUB / cuBLAS (native_peers) and torch (torch_peers.py), as GB/s of the input read.

Usage: python3 peer_charts.py RESULTS_DIR OUT_DIR
RESULTS_DIR holds bench.md, native.md and torch.md (the three programs' stdout). Writes
ml_reductions.png (f16/bf16 reductions and arg reductions at 2^28 bytes), axis.png (reductions along
an axis) and gemv_decoding.png (bf16 gemv and batched attention gemv) where their rows exist.
Needs matplotlib.
"""
import os
import sys

INPUT_BYTES = 1 << 28
# Bytes per element of each type the tables name.
ELEMENT_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "u8": 1, "i32": 4}


def batch_shape(batch, m, n):
    """A batched gemv's shape as torch_peers.py writes it and the tables key it: 'B x MxN'."""
    return f"{batch} x {m}x{n}"


def tables(path):
    """Every markdown table in `path`: (title of the section above it, header, rows)."""
    out, title, header, rows = [], "", None, []
    if not os.path.exists(path):
        print(f"peer_charts: {path} not found, left out")
        return out
    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("#"):
            title = line.lstrip("# ")
        if line.startswith("|") and not line.startswith("|---"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            if header is None:
                header = cells
            else:
                rows.append(dict(zip(header, cells)))
        elif header is not None and not line.startswith("|---"):
            out.append((title, header, rows))
            header, rows = None, []
    if header is not None:
        out.append((title, header, rows))
    return out


def pyplot():
    """matplotlib's pyplot on the Agg backend, imported only when a chart is drawn: the table
    readers here (`tables`, `number`, which gemv_table.py, axis_table.py and bench_ab.py share)
    need no matplotlib."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def number(s):
    try:
        return float(s)
    except ValueError:
        return None


TORCH_DTYPE = {"float16": "f16", "bfloat16": "bf16", "float32": "f32", "uint8": "u8", "int32": "i32"}


def reductions(results):
    """{(type, op): {who: µs}} at 2^28 bytes per input."""
    got = {}
    put = lambda key, who, us: us is not None and got.setdefault(key, {}).__setitem__(who, us)  # noqa: E731
    for title, _, rows in tables(os.path.join(results, "bench.md")):
        if title.startswith("Typed reductions") or title.startswith("Arg reductions"):
            for r in rows:
                put((r["type"], r["op"]), "ours", number(r["median µs"]))
    for title, _, rows in tables(os.path.join(results, "native.md")):
        for r in rows:
            what, us = r.get("what", ""), number(r.get("cold µs", r.get("median µs", "")))
            op = {"TransformReduce": "sum", "DeviceReduce::Min": "min", "DeviceReduce::Max": "max",
                  "ArgMax": "argmax", "ArgMin": "argmin"}
            for k, v in op.items():
                if k in what and "128256" not in r.get("n", ""):
                    put((r.get("type", ""), v), "CUB", us)
    for title, _, rows in tables(os.path.join(results, "torch.md")):
        for r in rows:
            t, us = TORCH_DTYPE.get(r.get("dtype", "")), number(r.get("median µs", ""))
            if t is None or "cold" not in r.get("mode", "") or not r.get("shape", "").isdigit():
                continue
            if int(r["shape"]) * ELEMENT_BYTES[t] != INPUT_BYTES:
                continue
            what = r["what"]
            if what == "x.sum(dtype=torch.float32)" or (what == "torch.sum" and t not in ("f16", "bf16")):
                put((t, "sum"), "torch", us)
            elif what == "torch.aminmax":
                put((t, "minmax"), "torch", us)
            elif what in ("torch.argmax", "torch.argmin"):
                put((t, what.split(".")[1]), "torch", us)
    return got


def bars(ax, labels, series, title, ylabel):
    width = 0.8 / max(1, len(series))
    for k, (who, values) in enumerate(series.items()):
        xs = [i + (k - (len(series) - 1) / 2) * width for i in range(len(labels))]
        ax.bar(xs, [v or 0 for v in values], width, label=who)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=45, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend()


def device(results):
    """The GPU named in bench.md's first line (`## Benchmark on NAME (…`), shortened to its model
    (H100, H200, …); "GPU" when there is none."""
    path = os.path.join(results, "bench.md")
    first = open(path).readline() if os.path.exists(path) else ""
    name = first.split(" on ", 1)[1].split(" (", 1)[0] if " on " in first else ""
    model = [w for w in name.split() if w[:1] in "HABL" and any(c.isdigit() for c in w)]
    return model[0] if model else (name or "GPU")


def chart_reductions(results, out):
    got = reductions(results)
    keys = [k for k in [("f16", "sum"), ("f16", "min"), ("f16", "max"), ("f16", "minmax"), ("bf16", "sum"),
                        ("bf16", "min"), ("bf16", "max"), ("bf16", "minmax"), ("u8", "argmax"), ("i32", "argmax"),
                        ("f32", "argmax"), ("f16", "argmax"), ("bf16", "argmax"), ("f32", "argmin"),
                        ("bf16", "argmin")] if k in got]
    if not keys:
        return print("peer_charts: no reduction rows")
    gbps = lambda us: INPUT_BYTES / (us * 1e-6) / 1e9 if us else None  # noqa: E731
    series = {who: [gbps(got[k].get(who)) for k in keys] for who in ("ours", "CUB", "torch")}
    fig, ax = pyplot().subplots(figsize=(12, 5))
    bars(ax, [f"{t} {op}" for t, op in keys], series, f"Reductions of 2^28 bytes, cold ({device(results)})", "GB/s of input")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "ml_reductions.png"), dpi=110)
    print(f"peer_charts: {os.path.join(out, 'ml_reductions.png')} ({len(keys)} workloads)")


def chart_rows(results, out, name, title, ours_title, native_key, torch_key, ours_key):
    """A chart of ours against native and torch rows, each keyed by the given functions."""
    ours, native, torch = {}, {}, {}
    for t, _, rows in tables(os.path.join(results, "bench.md")):
        if any(t.startswith(o) for o in ours_title):
            for r in rows:
                k = ours_key(r)
                if k:
                    ours[k] = number(r.get("GB/s", ""))
    for t, _, rows in tables(os.path.join(results, "native.md")):
        for r in rows:
            k = native_key(dict(r, section=t))
            if k:
                native[k] = number(r.get("GB/s", ""))
    for _, _, rows in tables(os.path.join(results, "torch.md")):
        for r in rows:
            k = torch_key(r)
            if k:
                torch[k] = number(r.get("GB/s", ""))
    keys = [k for k in ours if k in native or k in torch]
    if not keys:
        return print(f"peer_charts: no rows for {name}")
    series = {"ours": [ours.get(k) for k in keys], "CUB / cuBLAS": [native.get(k) for k in keys],
              "torch": [torch.get(k) for k in keys]}
    fig, ax = pyplot().subplots(figsize=(max(10, 0.45 * len(keys)), 5.5))
    bars(ax, [" ".join(k) for k in keys], series, title, "GB/s")
    fig.tight_layout()
    fig.savefig(os.path.join(out, name), dpi=110)
    print(f"peer_charts: {os.path.join(out, name)} ({len(keys)} workloads)")


def axis_keys():
    short = {"float32": "f32", "bfloat16": "bf16"}
    ours = lambda r: ((r["shape"].replace(" × ", "x"), r["type"], r["op"])  # noqa: E731
                      if r.get("along", "").startswith("rows") else None)

    def native(r):
        what = r.get("what", "")
        if "DeviceSegmentedReduce" not in what or not r.get("shape", "").endswith(" rows"):
            return None
        op = {"Sum": "sum", "Max": "max", "ArgMax": "argmax"}[what.split("::")[-1]]
        return (r["shape"][: -len(" rows")], short.get(r.get("type"), r.get("type")), op)

    def torch(r):
        what = r.get("what", "")
        # Our argmax rows write values and indices, as torch's max(dim) does (argmax(dim): indices).
        op = {"x.sum(dim=1)": "sum", "x.amax(dim=1)": "max", "x.max(dim=1)": "argmax"}.get(what)
        return (r["shape"], short.get(r.get("dtype"), r.get("dtype")), op) if op else None

    return ours, native, torch


def gemv_keys():
    def ours(r):
        t = "f32" if r.get("types") == "f32" else "bf16" if "(TST)" in r.get("types", "") else None
        return (batch_shape(r['batch'], r['m'], r['n']), r["op"], t) if t else None

    def native(r):
        if "call" not in r:
            return (batch_shape(r['batch'], r['m'], r['n']), r["op"], "f32") if "batch" in r else None
        if r["section"].startswith("native: f16"):
            return None
        if "TST" in r["call"] or "GemmEx" in r["call"]:
            return (batch_shape(r['batch'], r['m'], r['n']), r["op"], "bf16")
        return None

    def torch(r):
        what = r.get("what", "")
        if not (what.startswith("torch.mv") or what.startswith("torch.bmm")):
            return None
        t = {"float32": "f32", "bfloat16": "bf16"}.get(r.get("dtype"))
        return (r["shape"], "T" if "A^T" in what else "N", t) if t else None

    return ours, native, torch


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    results, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    chart_reductions(results, out)
    ours, native, torch = axis_keys()
    chart_rows(results, out, "axis.png", f"Reductions along rows (dim=1), cold ({device(results)})",
               ["Reductions along an axis"], native, torch, ours)
    ours, native, torch = gemv_keys()
    chart_rows(results, out, "gemv_decoding.png", f"gemv for decoding: bf16 projections and attention, cold ({device(results)})",
               ["Strided-batched sgemv", "Half-precision gemv"], native, torch, ours)


if __name__ == "__main__":
    main()
