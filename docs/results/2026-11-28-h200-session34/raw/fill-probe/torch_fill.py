"""torch's argmax along a dimension of length one (2^26 results, int64) and torch.zeros, timed as
torch_peers.py times (events a repetition, host not waiting), with the kernels the profiler saw."""
import statistics
import torch

def median_us(fn, reps=41, warmup=3):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    for s, e in ev:
        s.record(); fn(); e.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in ev) * 1e3

n = 1 << 26
print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}\n")
cases = []
for dt in (torch.float32, torch.bfloat16):
    x = torch.randn(1, n, device="cuda").to(dt)
    cases.append((f"argmax dim=0 of 1x2^26 {dt}", lambda x=x: torch.argmax(x, dim=0)))
    y = torch.randn(n, 1, device="cuda").to(dt)
    cases.append((f"argmax dim=1 of 2^26x1 {dt}", lambda y=y: torch.argmax(y, dim=1)))
out = torch.empty(n, dtype=torch.int64, device="cuda")
cases.append(("out.zero_() int64 2^26", lambda: out.zero_()))
cases.append(("torch.zeros int64 2^26", lambda: torch.zeros(n, dtype=torch.int64, device="cuda")))
print("| what | round 1 µs | round 2 | round 3 |\n|---|---|---|---|")
for what, fn in cases:
    print(f"| {what} | " + " | ".join(f"{median_us(fn):.1f}" for _ in range(3)) + " |")
from torch.profiler import profile, ProfilerActivity
print()
for what, fn in cases:
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn(); torch.cuda.synchronize()
    names = sorted({e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA})
    print(f"- {what}: {names}")
