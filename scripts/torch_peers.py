#!/usr/bin/env python3
"""PyTorch peer timings for the cudakernels benchmarks (copy, sum, aminmax, argmax, mv, value).

Usage:  PYTHONUNBUFFERED=1 python3 torch_peers.py [--quick] [--reps N]
            [--only copy,sum,aminmax,argmax,mv,shapes,batched,hgemv,value,axis] [--shapes PATH]
            [--axis-shapes PATH] [--gemv PATH]

"value" times a value returned to Python (x.sum().item(), torch.aminmax read back) on the host
clock, per call, median of VALUE_CALLS calls: what a program waits for.
"argmax" times torch.argmax/torch.argmin at 2^28 bytes (float32, bfloat16; cold) and
torch.argmax(x).item() on 128,256 bfloat16 logits (host clock per call): the peers of bench's "arg".
"shapes" times torch.mv(A, x) and torch.mv(A.t(), x) on the bench's sgemv shapes (set "bench" of
--shapes, by default data/sgemv_shapes.csv beside scripts/) and, with BENCH_CSV_DIR set, writes
sgemv_torch.csv there.
"axis" times x.sum, x.amax, x.max (values and indices) and x.argmax along dim=1 and dim=0 of the dense shapes of
--axis-shapes (by default data/axis_shapes.csv beside scripts/), float32 and bfloat16, cold, and
torch.segment_reduce (sum, max) over its ragged segments (skipped where torch lacks it).
"batched" times torch.bmm in float32 on the attention decode shapes (set "attention" of --gemv,
by default data/gemv_shapes.csv beside scripts/): A (batch, m, n) times x (batch, n, 1) for op
N, A.transpose(1, 2) times x (batch, m, 1) for op T, cold. "hgemv" times the same in bfloat16
and float16:
torch.mv on the Llama projections (set "llama") and torch.bmm on the attention shapes.

Each repetition is timed on its own CUDA event pair after warm-up; the MEDIAN is reported.
"hot" reuses one input; "cold" rotates over enough distinct inputs that their total size
exceeds 4x L2 (just 2 inputs when one alone is larger than L2). GB/s = bytes / time
(copy counts read+write). Peak GPU memory stays around 2.1 GiB.
"""
import argparse
import datetime
import math
import os
import statistics

import torch

MiB, GiB = 1 << 20, 1 << 30
QUEUED = 20  # calls between one pair of events with BENCH_TIMING=chained (as bin/bench)


def time_median(fn, inputs, reps, warmup):
    """Median µs of fn(*inputs[i % len(inputs)]), each repetition with its own events; the host
    does not wait between repetitions (as bin/bench and native_peers), unless BENCH_TIMING=synced.
    BENCH_TIMING=chained puts QUEUED calls back to back between each pair of events (µs over
    QUEUED), as bin/bench does."""
    synced = os.environ.get("BENCH_TIMING") == "synced"
    runs = QUEUED if os.environ.get("BENCH_TIMING") == "chained" else 1
    for i in range(warmup):
        fn(*inputs[i % len(inputs)])
    torch.cuda.synchronize()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(reps)]
    for i, (start, end) in enumerate(events):
        start.record()
        for j in range(runs):
            fn(*inputs[(warmup + i * runs + j) % len(inputs)])
        end.record()
        if synced:
            end.synchronize()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in events) * 1e3 / runs  # ms -> µs


def n_copies(nbytes, mode, l2):
    """How many distinct inputs to rotate over."""
    if mode == "hot":
        return 1
    if nbytes > l2:
        return 2
    return math.ceil(4 * l2 / nbytes) + 1


def row(what, shape, dtype, mode, us, nbytes):
    print(f"| {what} | {shape} | {dtype} | {mode} | {us:.1f} | {nbytes / us / 1e3:.1f} |")


def header(title):
    print(f"\n### {title}\n")
    print("| what | shape | dtype | mode | median µs | GB/s |")
    print("|---|---|---|---|---|---|")


def rand(n, dtype, dev):
    if dtype.is_floating_point:
        return torch.rand(n, dtype=dtype, device=dev)
    info = torch.iinfo(dtype)
    lo, hi = max(info.min, -(1 << 31)), min(info.max, (1 << 31) - 1)
    try:
        return torch.randint(lo, hi, (n,), dtype=dtype, device=dev)
    except RuntimeError:  # e.g. uint16 randint unsupported: go through int32
        return torch.randint(lo, hi, (n,), dtype=torch.int32, device=dev).to(dtype)


def release():
    torch.cuda.synchronize()
    torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    ap.add_argument("--only", default="copy,sum,aminmax,argmax,mv,shapes,batched,hgemv,value,axis",
                    help="comma-separated sections to run")
    ap.add_argument("--reps", type=int, help="timed repetitions (default 50, 10 with --quick)")
    ap.add_argument("--shapes", default=DEFAULT_SHAPES, help="the sgemv shapes file (default: %(default)s)")
    ap.add_argument("--axis-shapes", default=DEFAULT_AXIS_SHAPES, help="the axis shapes file (default: %(default)s)")
    ap.add_argument("--gemv", default=DEFAULT_GEMV, help="the decoding gemv shapes file (default: %(default)s)")
    args = ap.parse_args()
    only = set(args.only.split(","))
    reps, warmup = (10, 3) if args.quick else (50, 10)
    reps = args.reps or reps

    if not torch.cuda.is_available():
        raise SystemExit("torch_peers.py: CUDA is not available to PyTorch")
    torch.manual_seed(0)
    dev = torch.device("cuda", 0)
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 0) or 64 * MiB

    print(f"## PyTorch peers on {torch.cuda.get_device_name()}")
    print(f"\ndate {datetime.datetime.now().isoformat(timespec='seconds')}, torch {torch.__version__}, "
          f"CUDA {torch.version.cuda}, L2 {l2 / MiB:.0f} MiB, {reps} reps after {warmup} warm-up, median")

    if "copy" in only:
        copy_reference(dev, reps, warmup)
    if "sum" in only:
        sum_hot_cold(dev, reps, warmup, l2)
    if "aminmax" in only:
        aminmax_per_dtype(dev, reps, warmup)
    if "argmax" in only:
        argmax_peers(dev, reps, warmup)
    if "mv" in only:
        mv_hot_cold(dev, reps, warmup, l2)
    if "shapes" in only:
        mv_shapes(dev, reps, warmup, l2, load_shapes(args.shapes, "bench"))
    if "batched" in only:
        gemv_decoding(dev, reps, warmup, l2, load_gemv(args.gemv, "attention"), torch.float32)
    if "hgemv" in only:
        for dtype in (torch.bfloat16, torch.float16):
            gemv_decoding(dev, reps, warmup, l2, load_gemv(args.gemv, "llama") + load_gemv(args.gemv, "attention"),
                          dtype)
    if "value" in only:
        value_to_host(dev)
    if "axis" in only:
        axis_shapes(dev, reps, warmup, l2, load_axis_shapes(args.axis_shapes))


VALUE_CALLS = 5000


def value_to_host(dev):
    """A value read back to Python, per call on the host clock: the peer of bench's "value"."""
    import time
    print(f"\n### value to the host (host clock per call, median and mean of {VALUE_CALLS})\n")
    print("| what | n | median µs | mean µs |")
    print("|---|---|---|---|")

    def aminmax_back(x):
        lo, hi = torch.aminmax(x)
        return lo.item(), hi.item()

    for p in (12, 20):
        x = torch.rand(1 << p, device=dev)
        for what, fn in (("x.sum().item()", lambda: x.sum().item()), ("torch.aminmax(x), both .item()",
                                                                       lambda: aminmax_back(x))):
            for _ in range(100):
                fn()
            times = []
            for _ in range(VALUE_CALLS):
                t0 = time.perf_counter()
                fn()
                times.append(time.perf_counter() - t0)
            print(f"| {what} | 2^{p} | {statistics.median(times) * 1e6:.2f} | "
                  f"{statistics.fmean(times) * 1e6:.2f} |")
        del x
        release()


VOCAB = 128_256


def argmax_peers(dev, reps, warmup):
    """torch.argmax/argmin at 2^28 bytes, cold (2 tensors); torch.argmax(x).item() on VOCAB bf16."""
    import time
    header("torch.argmax / torch.argmin, 2^28 bytes, cold")
    for dt in (torch.float32, torch.bfloat16):
        name = str(dt).replace("torch.", "")
        n = (1 << 28) // torch.empty(0, dtype=dt).element_size()
        xs = [(rand(n, dt, dev),) for _ in range(2)]
        for what, fn in (("torch.argmax", torch.argmax), ("torch.argmin", torch.argmin)):
            us = time_median(fn, xs, reps, warmup)
            row(what, f"{n}", name, "cold (2)", us, 1 << 28)
        del xs
        release()
    print(f"\n### torch.argmax(x).item() on {VOCAB} bfloat16 logits (host clock per call, "
          f"median and mean of {VALUE_CALLS})\n")
    print("| what | n | median µs | mean µs | check |")
    print("|---|---|---|---|---|")
    at = VOCAB - 1000
    x = (torch.arange(VOCAB, device=dev) * 7919 % 2000).float().div(100).sub(10)
    x[at] = 30.0
    x = x.to(torch.bfloat16)
    for _ in range(100):
        torch.argmax(x).item()
    times, ok = [], True
    for _ in range(VALUE_CALLS):
        t0 = time.perf_counter()
        got = torch.argmax(x).item()
        times.append(time.perf_counter() - t0)
        ok = ok and got == at
    print(f"| torch.argmax(x).item() | {VOCAB} | {statistics.median(times) * 1e6:.2f} | "
          f"{statistics.fmean(times) * 1e6:.2f} | {'ok' if ok else 'FAIL'} |")
    del x
    release()


def copy_reference(dev, reps, warmup):
    """Device-to-device copy of 1 GiB: the bandwidth reference."""
    header("device-to-device copy (reference)")
    src = torch.randint(0, 256, (GiB,), dtype=torch.uint8, device=dev)
    dst = torch.empty_like(src)
    us = time_median(lambda s, d: d.copy_(s), [(src, dst)], reps, warmup)
    row("dst.copy_(src)", "2^30", "uint8", "-", us, 2 * GiB)
    del src, dst
    release()


def sum_hot_cold(dev, reps, warmup, l2):
    """torch.sum float32 at 2^20, 2^24, 2^28, hot and cold."""
    header("torch.sum float32")
    for p in (20, 24, 28):
        n = 1 << p
        for mode in ("hot", "cold"):
            xs = [(torch.rand(n, device=dev),) for _ in range(n_copies(4 * n, mode, l2))]
            us = time_median(torch.sum, xs, reps, warmup)
            row("torch.sum", f"2^{p}", "float32", f"{mode} ({len(xs)})", us, 4 * n)
            del xs
            release()


def sum_f32(x):
    return torch.sum(x, dtype=torch.float32)


def aminmax_per_dtype(dev, reps, warmup):
    """torch.aminmax and torch.sum per dtype, 2^28 bytes, cold (2 tensors); float16 and bfloat16
    sum as x.sum(dtype=torch.float32), the peer of the library's f32-accumulated half sums."""
    header("torch.aminmax / torch.sum, 2^28 bytes, cold")
    dtypes = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.float32, torch.float64,
              torch.float16, torch.bfloat16]
    if hasattr(torch, "uint16"):
        dtypes.insert(2, torch.uint16)
    for dt in dtypes:
        name = str(dt).replace("torch.", "")
        size = torch.empty(0, dtype=dt).element_size()
        n = (1 << 28) // size
        try:
            xs = [(rand(n, dt, dev),) for _ in range(2)]
        except Exception as e:  # noqa: BLE001
            print(f"| (skipped) | {n} | {name} | cold | - | - |  <!-- {type(e).__name__}: {e} -->")
            continue
        halves = dt in (torch.float16, torch.bfloat16)
        sums = ("x.sum(dtype=torch.float32)", sum_f32) if halves else ("torch.sum", torch.sum)
        for what, fn in (("torch.aminmax", torch.aminmax), sums):
            try:
                us = time_median(fn, xs, reps, warmup)
                row(what, f"{n}", name, "cold (2)", us, 1 << 28)
            except Exception as e:  # noqa: BLE001
                print(f"| {what} (skipped: {type(e).__name__}: {str(e).splitlines()[0][:80]}) "
                      f"| {n} | {name} | cold | - | - |")
        del xs
        release()


def mv_hot_cold(dev, reps, warmup, l2):
    """torch.mv float32, A row-major m x n."""
    header("torch.mv float32 (A row-major m x n)")
    for m in (16384, 1 << 20):
        for n in (16, 32, 128):
            nbytes = 4 * (m * n + n + m)
            x = torch.rand(n, device=dev)
            for mode in ("hot", "cold"):
                As = [(torch.rand(m, n, device=dev), x) for _ in range(n_copies(4 * m * n, mode, l2))]
                us = time_median(torch.mv, As, reps, warmup)
                row("torch.mv", f"{m}x{n}", "float32", f"{mode} ({len(As)})", us, nbytes)
                del As
                release()
            del x


DEFAULT_SHAPES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "sgemv_shapes.csv")
SHAPES_HEADER = "m,n,pad,a_offset,x_offset,sets"
DEFAULT_AXIS_SHAPES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "axis_shapes.csv")


def load_shapes(path, wanted):
    """The rows of the shapes file in set `wanted`: (m, n, lda - n, offset of A, offset of x)."""
    with open(path) as f:
        lines = [line.strip() for line in f if line.strip() and not line.startswith("#")]
    if not lines or lines[0] != SHAPES_HEADER:
        raise SystemExit(f"torch_peers.py: {path}: the first line is not {SHAPES_HEADER!r}")
    shapes = []
    for line in lines[1:]:
        *numbers, sets = line.split(",")
        if wanted in sets.split(" "):
            shapes.append(tuple(int(v) for v in numbers))
    return shapes


def mv_shapes(dev, reps, warmup, l2, shapes):
    """torch.mv on A (op N) and on A.t() (op T), A a row-major m x n view with stride lda, cold."""
    header("torch.mv on the bench's sgemv shapes, cold (A rotated past L2)")
    csv_dir = os.environ.get("BENCH_CSV_DIR")
    csv = open(os.path.join(csv_dir, "sgemv_torch.csv"), "w") if csv_dir else None
    if csv:
        csv.write("m,n,lda,a_off,x_off,op,cold_us,gbps\n")
    for m, n, pad, a_off, x_off in shapes:
        lda = n + pad
        a_len = a_off + (m - 1) * lda + n
        count = max(2, math.ceil(4 * l2 / (4 * a_len)))
        bases = [torch.rand(a_len, device=dev) for _ in range(count)]
        views = [b[a_off:].as_strided((m, n), (lda, 1)) for b in bases]
        nbytes = 4 * (m * n + m + n)
        for op in ("N", "T"):
            xb = torch.rand(x_off + (n if op == "N" else m), device=dev)
            x = xb[x_off:]
            inputs = [((v if op == "N" else v.t()), x) for v in views]
            us = time_median(torch.mv, inputs, reps, warmup)
            row(f"torch.mv ({'A' if op == 'N' else 'A.t()'})", f"{m}x{n} lda {lda} off ({a_off},{x_off})",
                "float32", f"cold ({count})", us, nbytes)
            if csv:
                csv.write(f"{m},{n},{lda},{a_off},{x_off},{op},{us:.2f},{nbytes / us / 1e3:.1f}\n")
            del xb, x, inputs
        del bases, views
        release()
    if csv:
        csv.close()


AXIS_HEADER = "kind,m,n"


def load_axis_shapes(path):
    """The rows of the axis shapes file: (kind, m, n)."""
    with open(path) as f:
        lines = [line.strip() for line in f if line.strip() and not line.startswith("#")]
    if not lines or lines[0] != AXIS_HEADER:
        raise SystemExit(f"torch_peers.py: {path}: the first line is not {AXIS_HEADER!r}")
    return [(kind, int(m), int(n)) for kind, m, n in (line.split(",") for line in lines[1:])]


def ragged_offsets(segments, longest):
    """The file's ragged segments: segment i has (i * 2654435761 mod 2^32) mod (longest + 1) elements."""
    offsets = [0]
    for i in range(segments):
        offsets.append(offsets[-1] + (i * 2654435761 % (1 << 32)) % (longest + 1))
    return offsets


def axis_shapes(dev, reps, warmup, l2, shapes):
    """x.sum / x.amax / x.max (values and indices) / x.argmax along dim=1 and dim=0, and
    segment_reduce over ragged segments, cold; inputs uniform in [0, 1) (torch.rand), the
    distribution of the bench's and native_peers' axis inputs."""
    header("reductions along an axis (data/axis_shapes.csv), cold")
    for dtype in (torch.float32, torch.bfloat16):
        size = torch.tensor([], dtype=dtype).element_size()
        for kind, m, n in shapes:
            if kind == "dense":
                nbytes = size * m * n
                xs = [(torch.rand(m, n, device=dev).to(dtype),) for _ in range(n_copies(nbytes, "cold", l2))]
                for dim in (1, 0):
                    for name, fn in (("sum", torch.sum), ("amax", torch.amax), ("max", torch.max),
                                     ("argmax", torch.argmax)):
                        us = time_median(lambda x: fn(x, dim=dim), xs, reps, warmup)
                        row(f"x.{name}(dim={dim})", f"{m}x{n}", str(dtype)[6:], f"cold ({len(xs)})", us, nbytes)
            else:
                offsets = torch.tensor(ragged_offsets(m, n), device=dev)
                total = int(offsets[-1])
                nbytes = size * total
                xs = [(torch.rand(total, device=dev).to(dtype),) for _ in range(n_copies(nbytes, "cold", l2))]
                for reduce in ("sum", "max"):
                    try:
                        us = time_median(lambda x: torch.segment_reduce(x, reduce, offsets=offsets), xs, reps, warmup)
                    except (RuntimeError, TypeError, AttributeError) as e:
                        print(f"(torch.segment_reduce {reduce} skipped: {str(e).splitlines()[0]})")
                        continue
                    row(f"segment_reduce({reduce})", f"{m} segments of 0..={n}", str(dtype)[6:],
                        f"cold ({len(xs)})", us, nbytes)
            del xs
            release()


DEFAULT_GEMV = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "gemv_shapes.csv")


def load_gemv(path, wanted):
    """The (batch, m, n) rows of the decoding shapes file in set `wanted`."""
    with open(path) as f:
        lines = [line.strip() for line in f if line.strip() and not line.startswith("#")]
    if not lines or lines[0] != "batch,m,n,sets":
        raise SystemExit(f"torch_peers.py: {path}: the first line is not 'batch,m,n,sets'")
    rows = []
    for line in lines[1:]:
        *numbers, sets = line.split(",")
        if wanted in sets.split(" "):
            rows.append(tuple(int(v) for v in numbers))
    return rows


def gemv_decoding(dev, reps, warmup, l2, shapes, dtype):
    """torch.mv (batch 1) or torch.bmm of row-major m x n matrices (or their transposes) with one
    vector each, in `dtype`, cold."""
    name = str(dtype).replace("torch.", "")
    header(f"torch.mv / torch.bmm on the decoding gemv shapes, {name}, cold (A rotated past L2)")
    size = torch.empty((), dtype=dtype).element_size()
    for batch, m, n in shapes:
        a_bytes = size * batch * m * n
        count = max(2, math.ceil(4 * l2 / a_bytes))
        As = [torch.rand(batch, m, n, device=dev).to(dtype) for _ in range(count)]
        nbytes = a_bytes + size * batch * (m + n)
        for op in ("N", "T"):
            x_len = n if op == "N" else m
            if batch == 1:
                x = torch.rand(x_len, device=dev).to(dtype)
                inputs = [((a[0] if op == "N" else a[0].t()), x) for a in As]
                fn, what = torch.mv, "torch.mv"
            else:
                x = torch.rand(batch, x_len, 1, device=dev).to(dtype)
                inputs = [((a if op == "N" else a.transpose(1, 2)), x) for a in As]
                fn, what = torch.bmm, "torch.bmm"
            us = time_median(fn, inputs, reps, warmup)
            row(f"{what} ({'A' if op == 'N' else 'A^T'})", f"{batch} x {m}x{n}", name, f"cold ({count})", us, nbytes)
            del x, inputs
        del As
        release()


if __name__ == "__main__":
    main()
