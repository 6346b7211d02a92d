//! Benchmark: the reduction ladder, the typed reductions and sgemv, timed with CUDA events
//! (median after warm-up), cold memory by rotating buffers larger than L2, and a
//! device-to-device copy as the bandwidth reference. Prints markdown tables.
//! Usage: `bench [--ptx | --cubin FILE] [value|ladder|auto|tuning|typed|sgemv|shapes|plans|multi]...` (all by
//! default). With `BENCH_CSV_DIR` set, the ladder and shapes sections also append their rows to
//! CSV files there.
//! Peers (torch.sum, torch.aminmax, torch.mv) come from scripts/torch_peers.py in the same call.
use cudakernels::cust::memory::{
    AsyncCopyDestination, DeviceBuffer, DeviceCopy, DevicePointer, DeviceSlice, LockedBuffer,
};
use cudakernels::{
    multi, open_with, validate_sgemv_op, Cubin, Error, Finish, Gpu, ImageChoice, KernelImages, LadderKernel, Op,
    ReduceStrategy, Result, RowShard, SgemvKernel, SgemvOptions, SgemvShape, TypedElement, TypedOp,
};
use std::io::Write;
use timing::{gbps, host_us, median_ms, pipelined_ms};

#[path = "bench/timing.rs"]
mod timing;

const REPS: usize = 30;
const WARMUP: usize = 5;

/// Enough buffers of `bytes` each that rotating through them misses L2 (4× its size).
fn rotation(gpu: &Gpu, bytes: usize) -> usize {
    ((4 * gpu.l2_bytes() + bytes - 1) / bytes).max(2)
}

fn buffers<T: DeviceCopy + Copy>(count: usize, n: usize, fill: impl Fn(usize) -> T) -> Result<Vec<DeviceBuffer<T>>> {
    let host: Vec<T> = (0..n).map(&fill).collect();
    (0..count).map(|_| DeviceBuffer::from_slice(&host).map_err(Error::cuda("cuMemcpyHtoD"))).collect()
}

/// Median ms of a device-to-device copy of `len` elements, from `srcs[i]` in turn (cold when
/// they are many or large).
fn copy_ms<T: DeviceCopy>(gpu: &Gpu, srcs: &[DeviceBuffer<T>], dst: &mut DeviceBuffer<T>, len: usize) -> Result<f64> {
    median_ms(gpu, WARMUP, REPS, |i| {
        // SAFETY: both buffers live until the stream is synchronized inside median_ms.
        unsafe { dst.index(..len).async_copy_from(&srcs[i % srcs.len()].index(..len), gpu.stream()) }
            .map_err(Error::cuda("cuMemcpyDtoDAsync"))
    })
}

fn copy_bandwidth(gpu: &Gpu) -> Result<f64> {
    let bytes = 1usize << 30;
    let src = buffers(1, bytes, |i| i as u8)?;
    let mut dst = buffers(1, bytes, |_| 0u8)?;
    let ms = copy_ms(gpu, &src, &mut dst[0], bytes)?;
    let bw = gbps(2 * bytes, ms);
    println!("\nDevice-to-device copy of 1 GiB: {:.1} µs, {:.0} GB/s (read + write)\n", ms * 1e3, bw);
    Ok(bw)
}

fn ladder_table(gpu: &Gpu, copy_bw: f64) -> Result<()> {
    for &log_n in [20usize, 24, 28].iter() {
        let n = 1usize << log_n;
        let bufs = buffers(rotation(gpu, 4 * n), n, |i| (i % 7) as f32 - 3.0)?;
        let mut out = DeviceBuffer::<f32>::zeroed(1).map_err(Error::cuda("cuMemAlloc"))?;
        println!("### f32 sum, n = 2^{} ({} MiB, cold: {} buffers rotated)\n", log_n, (4 * n) >> 20, bufs.len());
        println!("| kernel | finish | block | grain | median µs | GB/s | % of copy | step speedup | cumulative |");
        println!("|---|---|---|---|---|---|---|---|---|");
        let mut rows: Vec<(String, ReduceStrategy)> = LadderKernel::ALL
            .iter()
            .map(|&kernel| {
                let grain = match kernel {
                    LadderKernel::GlobalStride | LadderKernel::LocalStride | LadderKernel::WarpShuffle => 16,
                    _ => 1,
                };
                (
                    format!("{:?}", kernel),
                    ReduceStrategy::Ladder { kernel, finish: Finish::SecondPass, block: 256, grain },
                )
            })
            .collect();
        rows.push(("Auto".into(), ReduceStrategy::Auto));
        let (mut first, mut prev) = (0.0, 0.0);
        for (name, s) in rows {
            let ms =
                median_ms(gpu, WARMUP, REPS, |i| gpu.reduce_sum_into(&bufs[i % bufs.len()], &mut out, s).map(|_| ()))?;
            let (_, finish, block, grain) = s.resolve(4 * n);
            if first == 0.0 {
                first = ms;
                prev = ms;
            }
            let bw = gbps(4 * n, ms);
            csv_row(
                "ladder.csv",
                "n,kernel,finish,block,grain,median_us,gbps,pct_copy",
                format!(
                    "{},{},{:?},{},{},{:.2},{:.1},{:.1}",
                    n,
                    name,
                    finish,
                    block,
                    grain,
                    ms * 1e3,
                    bw,
                    100.0 * bw / copy_bw
                ),
            );
            println!(
                "| {} | {:?} | {} | {} | {:.1} | {:.0} | {:.1}% | {:.2}× | {:.1}× |",
                name,
                finish,
                block,
                grain,
                ms * 1e3,
                bw,
                100.0 * bw / copy_bw,
                prev / ms,
                first / ms
            );
            prev = ms;
        }
        println!();
    }
    Ok(())
}

/// The fast path's grid: block size × vectors per thread, at each size, cold. `pipelined`
/// is the time per call with calls queued back to back (`timing::pipelined_ms`); `host` the
/// CPU time to enqueue one call.
fn fast_path_tuning(gpu: &Gpu, copy_bw: f64) -> Result<()> {
    println!("### Fast-path tuning: Vectorized, f32 sum, cold\n");
    println!("| n | finish | block | grain | grid | median µs | pipelined µs | host µs | GB/s | % of copy |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for &log_n in [20usize, 24, 28].iter() {
        let n = 1usize << log_n;
        let bufs = buffers(rotation(gpu, 4 * n), n, |i| (i % 7) as f32 - 3.0)?;
        let mut out = buffers(1, 1, |_| 0.0f32)?;
        for &finish in [Finish::LastBlock, Finish::Flagged].iter() {
            for (&block, &grain) in
                [256u32, 512, 1024].iter().flat_map(|b| std::iter::repeat(b).zip([1u32, 2, 4, 8].iter()))
            {
                let s = ReduceStrategy::Ladder { kernel: LadderKernel::Vectorized, finish, block, grain };
                let mut call = |i: usize| gpu.reduce_sum_into(&bufs[i % bufs.len()], &mut out[0], s).map(|_| ());
                let ms = median_ms(gpu, WARMUP, REPS, &mut call)?;
                let piped = pipelined_ms(gpu, &mut call)?;
                let host = host_us(gpu, &mut call)?;
                let grid = LadderKernel::Vectorized.grid(n, block, grain, gpu.sm_count(), gpu.max_threads_per_sm());
                let bw = gbps(4 * n, ms);
                println!(
                    "| 2^{} | {:?} | {} | {} | {} | {:.1} | {:.1} | {:.1} | {:.0} | {:.1}% |",
                    log_n,
                    finish,
                    block,
                    grain,
                    grid,
                    ms * 1e3,
                    piped * 1e3,
                    host,
                    bw,
                    100.0 * bw / copy_bw
                );
            }
        }
    }
    println!();
    Ok(())
}

fn typed_row<T: TypedElement, F: Fn(usize) -> T>(gpu: &Gpu, copy_bw: f64, fill: F) -> Result<()> {
    let bytes = 1usize << 28;
    let n = bytes / std::mem::size_of::<T>();
    let bufs = buffers(rotation(gpu, bytes), n, fill)?;
    let mut out = buffers(1, 2, |_| T::default())?;
    let mut sum_out = buffers(1, 1, |_| T::Sum::default())?;
    for op in TypedOp::ALL.iter() {
        let ms = median_ms(gpu, WARMUP, REPS, |i| {
            let input = &bufs[i % bufs.len()];
            match op {
                TypedOp::Sum => gpu.sum_into(input, &mut sum_out[0]),
                _ => gpu.reduce_into(*op, input, &mut out[0]),
            }
        })?;
        let bw = gbps(bytes, ms);
        println!("| {} | {} | {:.1} | {:.0} | {:.1}% |", T::NAME, op.name(), ms * 1e3, bw, 100.0 * bw / copy_bw);
    }
    Ok(())
}

fn typed_table(gpu: &Gpu, copy_bw: f64) -> Result<()> {
    println!("### Typed reductions, 2^28 bytes per input (cold: rotated)\n");
    println!("| type | op | median µs | GB/s | % of copy |");
    println!("|---|---|---|---|---|");
    typed_row::<u8, _>(gpu, copy_bw, |i| (i * 31 % 251) as u8)?;
    typed_row::<i8, _>(gpu, copy_bw, |i| (i * 31 % 251) as i8)?;
    typed_row::<u16, _>(gpu, copy_bw, |i| (i * 31 % 65521) as u16)?;
    typed_row::<i16, _>(gpu, copy_bw, |i| (i * 31 % 65521) as i16)?;
    typed_row::<i32, _>(gpu, copy_bw, |i| (i as i32).wrapping_mul(2654435761u32 as i32))?;
    typed_row::<u32, _>(gpu, copy_bw, |i| (i as u32).wrapping_mul(2654435761))?;
    typed_row::<f32, _>(gpu, copy_bw, |i| (i % 1000) as f32 * 0.5 - 250.0)?;
    typed_row::<f64, _>(gpu, copy_bw, |i| (i % 1000) as f64 * 0.5 - 250.0)?;
    println!();
    Ok(())
}

fn sgemv_table(gpu: &Gpu, copy_bw: f64) -> Result<()> {
    println!("### sgemv y = A·x, A row-major m×n\n");
    let (a1, x1) = (buffers(1, 1, |_| 1.0f32)?, buffers(1, 1, |_| 1.0f32)?);
    let mut y1 = buffers(1, 1, |_| 0.0f32)?;
    let mut tiny = |_| gpu.sgemv(1, 1, &a1[0], &x1[0], &mut y1[0], SgemvOptions::default());
    let (floor, floor_host) = (median_ms(gpu, WARMUP, REPS, &mut tiny)?, host_us(gpu, &mut tiny)?);
    // The same kernel through cust alone: what the driver costs without this library's checks.
    let module =
        cudakernels::cust::module::Module::from_ptx(cudakernels::PTX, &[]).map_err(Error::cuda("cuModuleLoadData"))?;
    let f = module.get_function("sgemv_rows8").map_err(Error::cuda("cuModuleGetFunction"))?;
    let (a, x, y) = (a1[0].as_device_ptr().as_raw(), x1[0].as_device_ptr().as_raw(), y1[0].as_device_ptr().as_raw());
    let (len, m_n_lda, alpha, beta) = (1usize, 1usize, 1.0f32, 0.0f32);
    fn arg<T>(v: &T) -> *mut std::ffi::c_void {
        v as *const T as *mut std::ffi::c_void
    }
    let args = [
        arg(&a),
        arg(&len),
        arg(&x),
        arg(&len),
        arg(&m_n_lda),
        arg(&m_n_lda),
        arg(&m_n_lda),
        arg(&alpha),
        arg(&beta),
        arg(&y),
    ];
    // SAFETY: sgemv_rows8's ten parameters in order, for a 1×1 problem on live buffers.
    let mut raw = |_| unsafe { gpu.stream().launch(&f, 1, 32, 0, &args) }.map_err(Error::cuda("cuLaunchKernel"));
    let (raw_ms, raw_host) = (median_ms(gpu, WARMUP, REPS, &mut raw)?, host_us(gpu, &mut raw)?);
    println!("Launch floor, m = n = 1 (one event pair per call): Gpu::sgemv {:.1} µs ({:.1} µs on the host), bare cuLaunchKernel of the same kernel {:.1} µs ({:.1} µs on the host)\n",
        floor * 1e3, floor_host, raw_ms * 1e3, raw_host);
    println!("`% of copy`: of the 1 GiB copy above. `same-size copy`: a cold device-to-device copy moving as many");
    println!("bytes (read + write) as the sgemv, timed the same way, shown once per shape.\n");
    println!(
        "| m | n | kernel | hot µs | hot GB/s | cold µs | cold GB/s | cold % of copy | cold pipelined µs | host µs |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for &m in [16384usize, 1 << 20].iter() {
        for &n in [16usize, 32, 128].iter() {
            let bytes = 4 * (m * n + n + m);
            let a = buffers(rotation(gpu, 4 * m * n), m * n, |i| ((i % 13) as f32 - 6.0) * 0.125)?;
            let x = buffers(1, n, |i| (i % 5) as f32 * 0.25)?;
            let mut y = buffers(1, m, |_| 0.0f32)?;
            let mut dst = buffers(1, bytes / 8, |_| 0.0f32)?;
            let same_size = copy_ms(gpu, &a, &mut dst[0], bytes / 8)?;
            println!(
                "| {} | {} | same-size copy ({} MB) | | | {:.1} | {:.0} | {:.1}% | | |",
                m,
                n,
                bytes / 2 / 1000000,
                same_size * 1e3,
                gbps(bytes, same_size),
                100.0 * gbps(bytes, same_size) / copy_bw
            );
            let shape = cudakernels::validate_sgemv(
                m,
                n,
                n,
                (a[0].as_device_ptr().as_raw(), m * n),
                (x[0].as_device_ptr().as_raw(), n),
                m,
            )?;
            let kernels = std::iter::once(SgemvKernel::Auto)
                .chain(SgemvKernel::EXPLICIT.iter().copied().filter(|k| k.validate(&shape).is_ok()));
            for kernel in kernels {
                let opts = SgemvOptions { kernel, ..SgemvOptions::default() };
                let hot = median_ms(gpu, WARMUP, REPS, |_| gpu.sgemv(m, n, &a[0], &x[0], &mut y[0], opts))?;
                let mut cold_call = |i: usize| gpu.sgemv(m, n, &a[i % a.len()], &x[0], &mut y[0], opts);
                let cold = median_ms(gpu, WARMUP, REPS, &mut cold_call)?;
                let piped = pipelined_ms(gpu, &mut cold_call)?;
                let host = host_us(gpu, &mut cold_call)?;
                let name = match kernel {
                    SgemvKernel::Auto => format!("**Auto = {:?}**", SgemvKernel::choose(&shape)),
                    k => format!("{:?}", k),
                };
                println!(
                    "| {} | {} | {} | {:.1} | {:.0} | {:.1} | {:.0} | {:.1}% | {:.1} | {:.1} |",
                    m,
                    n,
                    name,
                    hot * 1e3,
                    gbps(bytes, hot),
                    cold * 1e3,
                    gbps(bytes, cold),
                    100.0 * gbps(bytes, cold) / copy_bw,
                    piped * 1e3,
                    host
                );
            }
        }
    }
    println!();
    Ok(())
}

/// `Auto` alone, with many repetitions, at the sizes torch.sum is compared on, and at n = 1
/// (one block: the launch floor of the same path). Beside it: the same input hot (one buffer,
/// in L2) and a cold device-to-device copy of the same bytes, timed the same way.
fn auto_table(gpu: &Gpu, copy_bw: f64) -> Result<()> {
    const AUTO_REPS: usize = 300;
    let median = |f: &mut dyn FnMut(usize) -> Result<()>| median_ms(gpu, WARMUP, AUTO_REPS, f);
    println!("### f32 sum, Auto, median of {} after {} warm-up\n", AUTO_REPS, WARMUP);
    println!("| n | finish | block | grain | cold µs | cold pipelined µs | cold GB/s | % of copy | hot µs | same-size copy, cold µs |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for &log_n in [0usize, 20, 24, 28].iter() {
        let n = 1usize << log_n;
        let bufs = buffers(rotation(gpu, 4 * n).min(1024), n, |i| (i % 7) as f32 - 3.0)?;
        let mut out = buffers(1, 1, |_| 0.0f32)?;
        let mut call =
            |i: usize| gpu.reduce_sum_into(&bufs[i % bufs.len()], &mut out[0], ReduceStrategy::Auto).map(|_| ());
        let cold = median(&mut call)?;
        let piped = pipelined_ms(gpu, &mut call)?;
        let hot = median(&mut |_| gpu.reduce_sum_into(&bufs[0], &mut out[0], ReduceStrategy::Auto).map(|_| ()))?;
        let mut dst = buffers(1, n, |_| 0.0f32)?;
        let copy = copy_ms(gpu, &bufs, &mut dst[0], n)?;
        let (_, finish, block, grain) = ReduceStrategy::Auto.resolve(4 * n);
        let bw = gbps(4 * n, cold);
        println!(
            "| 2^{} | {:?} | {} | {} | {:.2} | {:.2} | {:.0} | {:.1}% | {:.2} | {:.2} |",
            log_n,
            finish,
            block,
            grain,
            cold * 1e3,
            piped * 1e3,
            bw,
            100.0 * bw / copy_bw,
            hot * 1e3,
            copy * 1e3
        );
    }
    println!();
    Ok(())
}

/// Host microseconds of each of `calls` calls of `f` after `warmup` untimed ones: (median, mean,
/// every call's check passed).
fn per_call_us(warmup: usize, calls: usize, mut f: impl FnMut() -> Result<bool>) -> Result<(f64, f64, bool)> {
    let mut ok = true;
    for _ in 0..warmup {
        ok &= f()?;
    }
    let mut us = Vec::with_capacity(calls);
    for _ in 0..calls {
        let start = std::time::Instant::now();
        ok &= f()?;
        us.push(start.elapsed().as_secs_f64() * 1e6);
    }
    let mean = us.iter().sum::<f64>() / calls as f64;
    us.sort_by(|a, b| a.partial_cmp(b).unwrap());
    Ok((us[calls / 2], mean, ok))
}

/// Calls per batch in [`batch_us`].
const BATCH_CALLS: usize = 20;

/// Host µs per call of `f` over a batch of `BATCH_CALLS` calls enqueued back to back and one
/// synchronize of every GPU: the median of 7 batches, after one untimed batch.
fn batch_us(m: &multi::MultiGpu, mut f: impl FnMut() -> Result<()>) -> Result<f64> {
    let mut us = Vec::new();
    for batch in 0..8 {
        let start = std::time::Instant::now();
        for _ in 0..BATCH_CALLS {
            f()?;
        }
        m.synchronize()?;
        if batch > 0 {
            us.push(start.elapsed().as_secs_f64() * 1e6 / BATCH_CALLS as f64);
        }
    }
    us.sort_by(|a, b| a.partial_cmp(b).unwrap());
    Ok(us[us.len() / 2])
}

/// One value call of the bench, returning whether its result was right.
type ValueCall<'a> = Box<dyn FnMut() -> Result<bool> + 'a>;

/// A value returned to the host, as a program waits for it: µs per call on the host clock, on
/// one input (in L2). Peers in the same run: `torch_peers.py` (section value) and
/// `native_peers` (CUB + pinned copy + stream sync), timed the same way.
fn value_table(gpu: &Gpu, _copy_bw: f64) -> Result<()> {
    const VALUE_CALLS: usize = 5000;
    println!("### value to the host (host clock per call, median and mean of {})\n", VALUE_CALLS);
    println!("| call | stream | n | median µs | mean µs | check |");
    println!("|---|---|---|---|---|---|");
    let other = gpu.new_stream()?;
    for &log_n in [12usize, 20].iter() {
        let n = 1usize << log_n;
        // Small integers: every summation order gives the exact sum.
        let host: Vec<f32> = (0..n).map(|i| (i % 7) as f32 - 3.0).collect();
        let want = host.iter().map(|&v| v as f64).sum::<f64>() as f32;
        let x = DeviceBuffer::from_slice(&host).map_err(Error::cuda("cuMemcpyHtoD"))?;
        for (stream, s) in [("default", gpu.default_stream()), ("new_stream", &other)] {
            let rows: [(&str, ValueCall<'_>); 3] = [
                ("reduce_sum(Auto)", Box::new(|| Ok(s.reduce_sum(&x, ReduceStrategy::Auto)? == want))),
                ("sum", Box::new(|| Ok(s.sum(&x)? == want))),
                ("minmax", Box::new(|| Ok(s.minmax(&x)? == (-3.0, 3.0)))),
            ];
            for (call, f) in rows {
                let (median, mean, ok) = per_call_us(100, VALUE_CALLS, f)?;
                let check = if ok { "ok" } else { "FAIL" };
                println!("| {} | {} | 2^{} | {:.2} | {:.2} | {} |", call, stream, log_n, median, mean, check);
            }
        }
        value_breakdown(gpu, &x, want, log_n)?;
    }
    println!();
    Ok(())
}

/// Where a value call's time goes (default stream, Auto): the same sum enqueued into a device
/// buffer then a stream sync (no copy); written by the kernel straight into page-locked host
/// memory through its unified address (no copy engine); and a sync of the idle stream.
fn value_breakdown(gpu: &Gpu, x: &DeviceBuffer<f32>, want: f32, log_n: usize) -> Result<()> {
    const CALLS: usize = 2000;
    let mut dev_out = DeviceBuffer::<f32>::zeroed(1).map_err(Error::cuda("cuMemAlloc"))?;
    let into_sync = per_call_us(100, CALLS, || {
        gpu.reduce_sum_into(x, &mut dev_out, ReduceStrategy::Auto)?;
        gpu.synchronize()?;
        Ok(true)
    })?;
    let pinned = LockedBuffer::new(&f32::NAN, 1).map_err(Error::cuda("cuMemAllocHost"))?;
    // SAFETY: with unified addressing, cuMemAllocHost memory is device-accessible at its host
    // address; the slot outlives every call below, each waited for before the read.
    let mut slot = unsafe { DeviceSlice::from_raw_parts_mut(DevicePointer::from_raw(pinned.as_ptr() as u64), 1) };
    let mapped = per_call_us(100, CALLS, || {
        gpu.reduce_sum_into(x, &mut slot, ReduceStrategy::Auto)?;
        gpu.synchronize()?;
        // SAFETY: the kernel's write is complete after the stream sync; volatile, as the device wrote it.
        Ok(unsafe { std::ptr::read_volatile(pinned.as_ptr()) } == want)
    })?;
    let sync_only = per_call_us(100, CALLS, || gpu.synchronize().map(|_| true))?;
    for (what, (median, mean, ok)) in [
        ("reduce_sum_into + synchronize (no copy)", into_sync),
        ("reduce_sum_into the pinned slot, mapped (no copy engine)", mapped),
        ("synchronize of the idle stream", sync_only),
    ] {
        let check = if ok { "ok" } else { "FAIL" };
        println!("| {} | default | 2^{} | {:.2} | {:.2} | {} |", what, log_n, median, mean, check);
    }
    Ok(())
}

/// Several GPUs: a sharded f32 sum (2^28 per GPU) and a row-sharded sgemv (m = 2^20 per GPU,
/// n = 128), on GPU 0 alone and on every GPU; aggregate GB/s, scaling, and the join alone
/// (1-element shards: the shard reductions' launches, the NCCL gather and the folds).
fn multi_table(_gpu: &Gpu, copy_bw: f64) -> Result<()> {
    let all = cudakernels::open_all()?;
    let ranks = all.ranks();
    println!("### several GPUs: {} visible, NCCL {} (host clock, median of 20)\n", ranks, all.nccl_version());
    println!("| what | GPUs | per GPU | µs | aggregate GB/s | % of one GPU's copy × GPUs | scaling |");
    println!("|---|---|---|---|---|---|---|");
    drop(all);
    let counts: Vec<usize> = if ranks > 1 { vec![1, ranks] } else { vec![1] };
    let (mut sum_one, mut sgemv_one, mut sgemv_batch_one) = (0.0, 0.0, 0.0);
    for &k in counts.iter() {
        let m = cudakernels::open_devices(&(0..k as u32).collect::<Vec<_>>())?;
        let n = 1usize << 28;
        let host: Vec<f32> = (0..n).map(|i| (i % 13) as f32 - 6.0).collect();
        // Small integers: every partial sum is exact in f32, so the result is too.
        let want = k as f64 * host.iter().map(|&v| v as f64).sum::<f64>();
        let shards: Vec<_> = m.gpus().iter().map(|g| multi::upload(g, &host)).collect::<Result<_>>()?;
        drop(host);
        let views: Vec<&DeviceSlice<f32>> = shards.iter().map(|b| b.as_slice()).collect();
        let (us, _, ok) = per_call_us(2, 20, || Ok(m.reduce_sum(&views)?.iter().all(|&v| v as f64 == want)))?;
        let bytes = 4 * n * k;
        if k == 1 {
            sum_one = us;
        }
        println!(
            "| f32 sum, Auto + join | {} | 2^28 | {:.1} | {:.0} | {:.1}% | {:.2}× |{}",
            k,
            us,
            gbps(bytes, us / 1e3),
            100.0 * gbps(bytes, us / 1e3) / (copy_bw * k as f64),
            sum_one * k as f64 / us,
            if ok { "" } else { " WRONG" }
        );
        drop(views);
        drop(shards);
        let ones: Vec<_> = m.gpus().iter().map(|g| multi::upload(g, &[1.0f32])).collect::<Result<_>>()?;
        let views: Vec<&DeviceSlice<f32>> = ones.iter().map(|b| b.as_slice()).collect();
        let us = per_call_us(2, 200, || m.reduce_sum(&views).map(|_| true))?.0;
        println!("| join alone (1-element shards) | {} | 1 | {:.1} | | | |", k, us);

        let (rows, cols) = (1usize << 20, 128usize);
        let a_host: Vec<f32> = (0..rows * cols).map(|i| ((i % 7) as f32 - 3.0) * 0.25).collect();
        let x_host: Vec<f32> = (0..cols).map(|i| (i % 5) as f32 - 2.0).collect();
        let a: Vec<_> = m.gpus().iter().map(|g| multi::upload(g, &a_host)).collect::<Result<_>>()?;
        drop(a_host);
        let mut xs: Vec<_> = m.gpus().iter().map(|g| multi::upload(g, &x_host)).collect::<Result<_>>()?;
        let mut ys: Vec<_> = m.gpus().iter().map(|g| multi::upload(g, &vec![0f32; rows])).collect::<Result<_>>()?;
        let mut shards: Vec<RowShard> = a
            .iter()
            .zip(xs.iter_mut())
            .zip(ys.iter_mut())
            .map(|((a, x), y)| RowShard { rows, a: a.as_slice(), x, y })
            .collect();
        let us = per_call_us(2, 20, || {
            m.sgemv_rows(cols, &mut shards, SgemvOptions::default())?;
            m.synchronize().map(|_| true)
        })?
        .0;
        if k == 1 {
            sgemv_one = us;
        }
        let bytes = 4 * (rows * cols + rows + cols) * k;
        println!(
            "| sgemv rows (x broadcast + Auto) | {} | m = 2^20, n = 128 | {:.1} | {:.0} | {:.1}% | {:.2}× |",
            k,
            us,
            gbps(bytes, us / 1e3),
            100.0 * gbps(bytes, us / 1e3) / (copy_bw * k as f64),
            sgemv_one * k as f64 / us
        );
        // Back to back, one synchronize per batch: the GPUs' throughput without the host's
        // per-call launch and wait (how nccl-tests times collectives).
        let us = batch_us(&m, || m.sgemv_rows(cols, &mut shards, SgemvOptions::default()))?;
        if k == 1 {
            sgemv_batch_one = us;
        }
        println!(
            "| sgemv rows, {} calls back to back | {} | m = 2^20, n = 128 | {:.1} | {:.0} | {:.1}% | {:.2}× |",
            BATCH_CALLS,
            k,
            us,
            gbps(bytes, us / 1e3),
            100.0 * gbps(bytes, us / 1e3) / (copy_bw * k as f64),
            sgemv_batch_one * k as f64 / us
        );
        drop(shards);
        // Its two parts alone: the NCCL broadcast of x, and the sgemvs with x already in place.
        let us = per_call_us(2, 200, || {
            let mut views: Vec<&mut DeviceSlice<f32>> = xs.iter_mut().map(|x| &mut **x).collect();
            m.broadcast(0, &mut views)?;
            m.synchronize().map(|_| true)
        })?
        .0;
        println!("| x broadcast alone (NCCL, {} floats) | {} | | {:.1} | | | |", cols, k, us);
        let us = per_call_us(2, 20, || {
            for r in 0..k {
                m.gpus()[r].sgemv(rows, cols, &a[r], &xs[r], &mut ys[r], SgemvOptions::default())?;
            }
            m.synchronize().map(|_| true)
        })?
        .0;
        println!(
            "| sgemvs alone (x in place) | {} | m = 2^20, n = 128 | {:.1} | | | {:.2}× |",
            k,
            us,
            sgemv_one * k as f64 / us
        );
    }
    println!();
    Ok(())
}

/// Appends `row` to `file` in `$BENCH_CSV_DIR` (with `header` first in a new file); does
/// nothing without the variable. A write failure is reported once per row, not fatal.
fn csv_row(file: &str, header: &str, row: String) {
    let dir = match std::env::var_os("BENCH_CSV_DIR") {
        Some(d) => std::path::PathBuf::from(d),
        None => return,
    };
    let path = dir.join(file);
    let new = !path.exists();
    let written = std::fs::create_dir_all(&dir)
        .and_then(|_| std::fs::OpenOptions::new().create(true).append(true).open(&path))
        .and_then(|mut f| if new { writeln!(f, "{}", header) } else { Ok(()) }.and_then(|_| writeln!(f, "{}", row)));
    if let Err(e) = written {
        eprintln!("warning: writing {}: {}", path.display(), e);
    }
}

/// The shapes of issue 12 and the awkward views: (m, n, lda - n, offset of A, offset of x).
/// scripts/native_peers.cu and scripts/torch_peers.py time the same list.
const SHAPES: [(usize, usize, usize, usize, usize); 22] = [
    (1024, 1024, 0, 0, 0),
    (4096, 4096, 0, 0, 0),
    (8192, 8192, 0, 0, 0),
    (16384, 16384, 0, 0, 0),
    (4096, 11008, 0, 0, 0),
    (11008, 4096, 0, 0, 0),
    (4096, 14336, 0, 0, 0),
    (14336, 4096, 0, 0, 0),
    (1 << 20, 16, 0, 0, 0),
    (1 << 20, 32, 0, 0, 0),
    (1 << 20, 64, 0, 0, 0),
    (1 << 20, 128, 0, 0, 0),
    (1 << 20, 256, 0, 0, 0),
    (64, 1 << 20, 0, 0, 0),
    (256, 1 << 20, 0, 0, 0),
    (4096, 4096, 1, 0, 0),
    (4096, 4096, 0, 1, 1),
    (1 << 20, 16, 1, 0, 0),
    (1 << 20, 16, 0, 1, 1),
    (1000, 1000, 0, 0, 0),
    (1 << 20, 3, 0, 0, 0),
    (3, 1 << 20, 0, 0, 0),
];

/// `Auto` on every shape of [`SHAPES`], both ops: cold (A rotated past L2), pipelined and hot,
/// beside a cold device-to-device copy moving as many bytes.
fn shapes_table(gpu: &Gpu, copy_bw: f64) -> Result<()> {
    println!("### sgemv Auto on the issue's shapes, both ops (cold: A rotated past L2; x and y one buffer)\n");
    println!("`GB/s` counts A, x and y once. `copy µs`: a cold device-to-device copy of as many bytes (read + write), timed the same way.\n");
    println!("| m | n | lda | offsets | op | Auto kernel | splits | cold µs | cold pipelined µs | hot µs | GB/s | % of 1 GiB copy | copy µs | % of same-size copy |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for &(m, n, pad, a_off, x_off) in SHAPES.iter() {
        let lda = n + pad;
        let a_len = a_off + (m - 1) * lda + n;
        let a = buffers(rotation(gpu, 4 * a_len), a_len, |i| ((i % 13) as f32 - 6.0) * 0.125)?;
        let bytes = 4 * (m * n + m + n);
        let mut dst = buffers(1, bytes / 8, |_| 0.0f32)?;
        let copy = copy_ms(gpu, &a, &mut dst[0], (bytes / 8).min(a_len))?;
        drop(dst);
        for &op in [Op::N, Op::T].iter() {
            let (x_len, y_len) = if op == Op::N { (n, m) } else { (m, n) };
            let x = buffers(1, x_off + x_len, |i| (i % 5) as f32 * 0.25)?;
            let mut y = buffers(1, y_len, |_| 0.0f32)?;
            let xv = x[0].index(x_off..);
            let opts = SgemvOptions { lda: Some(lda), op, ..SgemvOptions::default() };
            let a_raw = |i: usize| (a[i].as_device_ptr().as_raw() + 4 * a_off as u64, a_len - a_off);
            let shape = validate_sgemv_op(op, m, n, lda, a_raw(0), (xv.as_device_ptr().as_raw(), x_len), y_len)?;
            let kernel = gpu.sgemv_auto(&shape)?;
            let plan = gpu.sgemv_plan(kernel, &shape)?;
            let mut cold_call = |i: usize| gpu.sgemv(m, n, &a[i % a.len()].index(a_off..), &xv, &mut y[0], opts);
            let cold = median_ms(gpu, WARMUP, REPS, &mut cold_call)?;
            let piped = pipelined_ms(gpu, &mut cold_call)?;
            let hot = median_ms(gpu, WARMUP, REPS, |_| gpu.sgemv(m, n, &a[0].index(a_off..), &xv, &mut y[0], opts))?;
            let bw = gbps(bytes, cold);
            let op_name = if op == Op::N { "N" } else { "T" };
            println!(
                "| {} | {} | {} | ({}, {}) | {} | {:?} | {} | {:.1} | {:.1} | {:.1} | {:.0} | {:.1}% | {:.1} | {:.1}% |",
                m, n, lda, a_off, x_off, op_name, kernel, plan.splits, cold * 1e3, piped * 1e3, hot * 1e3, bw,
                100.0 * bw / copy_bw, copy * 1e3, 100.0 * copy / cold
            );
            csv_row(
                "sgemv_ours.csv",
                "m,n,lda,a_off,x_off,op,kernel,cold_us,pipelined_us,hot_us,gbps,copy_us",
                format!(
                    "{},{},{},{},{},{},{:?},{:.2},{:.2},{:.2},{:.1},{:.2}",
                    m,
                    n,
                    lda,
                    a_off,
                    x_off,
                    op_name,
                    kernel,
                    cold * 1e3,
                    piped * 1e3,
                    hot * 1e3,
                    bw,
                    copy * 1e3
                ),
            );
        }
    }
    println!();
    Ok(())
}

/// Launch plans around the ones `plan()` picks, launched raw from the module the handle
/// loaded, on the shapes where Auto trails cuBLAS or a same-size copy: wide rows by rows per
/// block, split-K by waves, transposed by lanes per row and blocks per SM. Cold (A rotated).
fn plans_table(gpu: &Gpu, copy_bw: f64) -> Result<()> {
    use cudakernels::cust::module::Module;
    let module = match gpu.image() {
        cudakernels::LoadedImage::Cubin { sm } => {
            Module::from_cubin(cudakernels::IMAGES.cubin(sm).expect("cubin"), &[])
        }
        _ => Module::from_ptx(cudakernels::PTX, &[]),
    }
    .map_err(Error::cuda("cuModuleLoadData"))?;
    fn arg<T>(v: &T) -> *mut std::ffi::c_void {
        v as *const T as *mut std::ffi::c_void
    }
    println!("### sgemv launch plans (raw launches, cold)\n");
    println!("| m | n | lda | op | kernel | args | grid | cold µs | GB/s | % of 1 GiB copy |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    use cudakernels::config::{
        SGEMV_SPLIT_BLOCK, SGEMV_T_BLOCK, SGEMV_T_STRIPE_DEPTHS, SGEMV_WIDE_TILE, VECTOR_UNROLL, WARP_SIZE,
    };
    let sms = gpu.sm_count() as usize;
    // (m, n, lda - n, offset of A, op)
    let cases: [(usize, usize, usize, usize, Op); 20] = [
        (64, 1 << 20, 0, 0, Op::N),
        (256, 1 << 20, 0, 0, Op::N),
        (3, 1 << 20, 0, 0, Op::N),
        (16384, 16384, 0, 0, Op::N),
        (4096, 14336, 0, 0, Op::N),
        (4096, 4096, 0, 0, Op::N),
        (4096, 4096, 0, 0, Op::T),
        (4096, 4096, 1, 0, Op::T),
        (4096, 4096, 0, 1, Op::T),
        (8192, 8192, 0, 0, Op::T),
        (16384, 16384, 0, 0, Op::T),
        (1024, 1024, 0, 0, Op::T),
        (11008, 4096, 0, 0, Op::T),
        (4096, 11008, 0, 0, Op::T),
        (14336, 4096, 0, 0, Op::T),
        (4096, 14336, 0, 0, Op::T),
        (1 << 20, 16, 0, 0, Op::T),
        (1 << 20, 16, 1, 0, Op::T),
        (1 << 20, 64, 0, 0, Op::T),
        (1000, 1000, 0, 0, Op::T),
    ];
    for &(m, n, pad, off, op) in cases.iter() {
        let lda = n + pad;
        let a_len = off + (m - 1) * lda + n;
        let a = buffers(rotation(gpu, 4 * a_len), a_len, |i| ((i % 13) as f32 - 6.0) * 0.125)?;
        let (x_len, y_len) = if op == Op::N { (n, m) } else { (m, n) };
        let x = buffers(1, x_len, |i| (i % 5) as f32 * 0.25)?;
        let y = buffers(1, y_len, |_| 0.0f32)?;
        let partials = buffers(1, 64 * y_len.max(m * ((n + 1023) / 1024)), |_| 0.0f32)?;
        let counters = buffers(1, y_len.max(m), |_| 0u32)?;
        let bytes = 4 * (m * n + m + n);
        // (entry, args, grid)
        let mut runs: Vec<(&str, Vec<usize>, usize)> = Vec::new();
        if op == Op::N {
            let tiles = (n + SGEMV_WIDE_TILE - 1) / SGEMV_WIDE_TILE;
            for &rows in [4usize, 8, 12, 16, 24, 32].iter().filter(|&&r| r < m + 4) {
                runs.push(("sgemv_wide_vec4", vec![rows], (m + rows - 1) / rows * tiles));
            }
            for &waves in [1usize, 2, 4].iter() {
                let target = waves * (gpu.max_threads_per_sm() / SGEMV_SPLIT_BLOCK) as usize * sms;
                let min_chunk = 4 * (VECTOR_UNROLL * SGEMV_SPLIT_BLOCK) as usize;
                let splits = (target / m).clamp(1, (n / min_chunk).max(1));
                let chunk = ((n + splits - 1) / splits + 3) / 4 * 4;
                let splits = (n + chunk - 1) / chunk;
                runs.push(("sgemv_split_k_vec4", vec![chunk], m * splits));
            }
        } else {
            // The plan `TVec4` / `TScalar` get, with the blocks the device keeps resident.
            let old = if pad == 0 && off == 0 && n % 4 == 0 { SgemvKernel::TVec4 } else { SgemvKernel::TScalar };
            let f = module.get_function(old.entry_point()).map_err(Error::cuda("cuModuleGetFunction"))?;
            let per_sm = f
                .max_active_blocks_per_multiprocessor(SGEMV_T_BLOCK.into(), 0)
                .map_err(Error::cuda("cuOccupancyMaxActiveBlocksPerMultiprocessor"))?;
            let shape = SgemvShape { op, m, n, lda, a_addr: 4 * off as u64, x_addr: 0 };
            let p = old.plan(&shape, sms as u32, per_sm * SGEMV_T_BLOCK)?;
            runs.push((old.entry_point(), p.args, p.grid as usize));
            // Striped: 32-column tiles × 1 to 4 row splits, at three depths.
            let tiles = (n + WARP_SIZE as usize - 1) / WARP_SIZE as usize;
            for entry in SGEMV_T_STRIPE_DEPTHS.iter().map(|&d| SgemvKernel::TStripes(d).entry_point()) {
                for &splits in [1usize, 2, 3, 4].iter().filter(|&&s| 2 * tiles * s >= sms && tiles * s <= 6 * sms) {
                    let rows_per_split = (m + splits - 1) / splits;
                    runs.push((entry, vec![rows_per_split, 0], tiles * splits));
                    if shape.stripes_shift() > 0 && splits == 1 {
                        // The same with the tiles shifted onto aligned lines.
                        let tiles = shape.stripes_tiles();
                        runs.push((entry, vec![rows_per_split, shape.stripes_shift()], tiles));
                    }
                }
            }
            if tiles < sms {
                // Few tiles: splits to fill the device once or twice.
                for &per_sm in [1usize, 2].iter() {
                    let splits = (per_sm * sms / tiles).max(1);
                    let rows_per_split = (m + splits - 1) / splits;
                    let middle = SgemvKernel::TStripes(SGEMV_T_STRIPE_DEPTHS[1]).entry_point();
                    runs.push((middle, vec![rows_per_split, 0], tiles * splits));
                }
            }
        }
        for (entry, extra, grid) in runs {
            let f = module.get_function(entry).map_err(Error::cuda("cuModuleGetFunction"))?;
            let kernel = SgemvKernel::EXPLICIT.iter().find(|k| k.entry_point() == entry).expect("an sgemv entry");
            let block = kernel.block();
            let (xp, yp) = (x[0].as_device_ptr().as_raw(), y[0].as_device_ptr().as_raw());
            let (pp, cp) = (partials[0].as_device_ptr().as_raw(), counters[0].as_device_ptr().as_raw());
            let (alpha, beta) = (1.0f32, 0.0f32);
            let mut call = |i: usize| {
                let ap = a[i % a.len()].as_device_ptr().as_raw() + 4 * off as u64;
                let a_view = a_len - off;
                let mut args = vec![
                    arg(&ap),
                    arg(&a_view),
                    arg(&xp),
                    arg(&x_len),
                    arg(&m),
                    arg(&n),
                    arg(&lda),
                    arg(&alpha),
                    arg(&beta),
                    arg(&yp),
                ];
                args.extend(extra.iter().map(arg));
                args.push(arg(&pp));
                args.push(arg(&cp));
                // SAFETY: the entry's parameters in order; partials and counters sized for
                // every plan above (counters zeroed, left zeroed by the kernel).
                unsafe { gpu.stream().launch(&f, grid as u32, block, 0, &args) }.map_err(Error::cuda("cuLaunchKernel"))
            };
            let ms = median_ms(gpu, WARMUP, REPS, &mut call)?;
            let bw = gbps(bytes, ms);
            println!(
                "| {} | {} | {} | {:?} | {} | {:?} | {} | {:.1} | {:.0} | {:.1}% |",
                m,
                n,
                lda,
                op,
                entry,
                extra,
                grid,
                ms * 1e3,
                bw,
                100.0 * bw / copy_bw
            );
        }
    }
    println!();
    Ok(())
}

type Section = fn(&Gpu, f64) -> Result<()>;
const SECTIONS: [(&str, Section); 9] = [
    ("value", value_table),
    ("ladder", ladder_table),
    ("auto", auto_table),
    ("tuning", fast_path_tuning),
    ("typed", typed_table),
    ("sgemv", sgemv_table),
    ("shapes", shapes_table),
    ("plans", plans_table),
    ("multi", multi_table),
];

/// Opens device 0 with the SASS in the cubin file `path` (to compare assemblers).
fn open_cubin_file(path: &str) -> Result<Gpu> {
    let image: &'static [u8] = Box::leak(std::fs::read(path).expect("reading the cubin").into_boxed_slice());
    let sm = Cubin::arch_of(image).expect("a cubin");
    let cubins: &'static [Cubin] = Box::leak(Box::new([Cubin { sm, image }]));
    Gpu::new(Box::leak(Box::new(KernelImages { ptx: cudakernels::PTX, cubins })), 0, ImageChoice::Auto)
}

/// `bench [--ptx | --cubin FILE] [SECTION...]`: the named sections (all by default) after the
/// copy reference. `--ptx` loads the PTX (compiled by the driver) instead of the device's
/// cubin; `--cubin FILE` loads the SASS in FILE.
fn main() {
    let mut wanted: Vec<String> = std::env::args().skip(1).collect();
    let ptx = wanted.iter().any(|w| w == "--ptx");
    wanted.retain(|w| w != "--ptx");
    let cubin = wanted.iter().position(|w| w == "--cubin").map(|i| {
        wanted.remove(i);
        wanted.remove(i)
    });
    if let Some(bad) = wanted.iter().find(|w| !SECTIONS.iter().any(|(name, _)| name == w)) {
        eprintln!(
            "error: unknown section {:?}; sections are {:?}",
            bad,
            SECTIONS.iter().map(|s| s.0).collect::<Vec<_>>()
        );
        std::process::exit(2);
    }
    let opened = match &cubin {
        Some(path) => open_cubin_file(path),
        None => open_with(0, if ptx { ImageChoice::Ptx } else { ImageChoice::Auto }),
    };
    let gpu = match opened {
        Ok(g) => g,
        Err(e) => {
            eprintln!("error: the benchmark needs a CUDA device: {}", e);
            std::process::exit(1);
        }
    };
    println!(
        "## Benchmark on {} ({} SMs, L2 {} MiB), kernels: {:?}",
        gpu.name(),
        gpu.sm_count(),
        gpu.l2_bytes() >> 20,
        gpu.image()
    );
    let result = copy_bandwidth(&gpu).and_then(|bw| {
        SECTIONS
            .iter()
            .filter(|(name, _)| wanted.is_empty() || wanted.iter().any(|w| w == name))
            .try_for_each(|(_, section)| section(&gpu, bw))
    });
    if let Err(e) = result {
        eprintln!("error: {}", e);
        std::process::exit(1);
    }
}
