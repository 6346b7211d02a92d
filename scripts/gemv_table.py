#!/usr/bin/env python3
"""The tables of gemv against its peers from one device call's markdown output: ours (`bin/bench
batched hgemv shapes`), native cuBLAS (`native_peers batched hgemv sgemv`) and torch
(`torch_peers.py --only batched,hgemv,shapes`), with the faster peer over ours for each row and how
many rows are below it: the decoding shapes (f32 batched; bf16 with bf16 y against TST, GemmEx and
torch, bf16 with f32 y against TSS; f16 the same against HSH and HSS) and the f32 sgemv shapes
(cold).

Usage: python3 gemv_table.py RESULTS_DIR
RESULTS_DIR holds bench.md, native.md and torch.md (the three programs' stdout).
"""
import os
import sys

from peer_charts import batch_shape, number, tables


def peers(results):
    """{key: {who: µs}}: decoding keys (shape, op, types) and sgemv keys (shape, op)."""
    got = {}

    def put(key, who, us):
        if us is not None:
            slot = got.setdefault(key, {})
            slot[who] = min(us, slot.get(who, us))

    for title, _, rows in tables(os.path.join(results, "native.md")):
        for r in rows:
            if "call" in r:
                shape = batch_shape(r['batch'], r['m'], r['n'])
                call = r["call"][:3]
                f16 = title.startswith("native: f16")
                types = call if call in ("TST", "TSS", "HSH", "HSS") else "HSH" if f16 else "TST"
                put((shape, r["op"], types), "cuBLAS", number(r["µs"]))
            elif "batch" in r:
                put((batch_shape(r['batch'], r['m'], r['n']), r["op"], "f32"), "cuBLAS", number(r["µs"]))
            elif "cold µs" in r and "m" in r:
                put((f"{r['m']}x{r['n']} lda {r['lda']} off {r['offsets'].replace(' ', '')}", r["op"]), "cuBLAS",
                    number(r["cold µs"]))
    for _, _, rows in tables(os.path.join(results, "torch.md")):
        for r in rows:
            what = r.get("what", "")
            if what.startswith("torch.bmm") or (what.startswith("torch.mv") and " x " in r.get("shape", "")):
                types = {"float32": "f32", "bfloat16": "TST", "float16": "HSH"}.get(r.get("dtype"))
                put((r["shape"], "T" if "A^T" in what else "N", types), "torch", number(r["median µs"]))
            elif what.startswith("torch.mv"):
                put((r["shape"], "T" if ".t()" in what else "N"), "torch", number(r["median µs"]))
    return got


def row(key_text, kernel, ours, copy, peer):
    """A table line and the best peer's ratio (None without a peer)."""
    times = [t for t in peer.values() if t]
    ratio = min(times) / ours if times and ours else None
    fmt = lambda who: f"{peer[who]:.1f}" if peer.get(who) else "-"  # noqa: E731
    shown = f"{ratio:.2f}×" if ratio is not None else "-"
    return f"| {key_text} | {kernel} | {ours:.1f} | {copy} | {fmt('cuBLAS')} | {fmt('torch')} | {shown} |", ratio


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    results = sys.argv[1]
    others = peers(results)
    header = "| kernel | ours µs | % of same-size copy | cuBLAS µs | torch µs | best peer / ours |"
    for wanted, lead, columns in [
        (("Strided-batched sgemv", "Half-precision"), "Decoding gemv", "| types | batch × m×n | op "),
        (("sgemv Auto",), "f32 sgemv", "| shape | op "),
    ]:
        below = total = 0
        print(f"### {lead}\n")
        print(columns + header)
        print("|---" * (columns.count("|") + header.count("|") - 2) + "|")
        for title, _, rows in tables(os.path.join(results, "bench.md")):
            if not title.startswith(wanted):
                continue
            for r in rows:
                if "types" in r:
                    types = "f32" if r["types"] == "f32" else r["types"][-4:-1]
                    shape = batch_shape(r['batch'], r['m'], r['n'])
                    key, text = (shape, r["op"], types), f"{types} | {shape} | {r['op']}"
                    ours, kernel = number(r["µs"]), r["kernel"]
                else:
                    shape = f"{r['m']}x{r['n']} lda {r['lda']} off {r['offsets'].replace(' ', '')}"
                    key, text = (shape, r["op"]), f"{shape} | {r['op']}"
                    ours, kernel = number(r["cold µs"]), r["Auto kernel"]
                line, ratio = row(text, kernel, ours, r["% of same-size copy"], others.get(key, {}))
                print(line)
                total += ratio is not None
                below += ratio is not None and ratio < 1.0
        print(f"\n{below} of {total} rows with a peer are below the faster peer.\n")


if __name__ == "__main__":
    main()
