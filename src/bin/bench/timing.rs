//! Timing with CUDA events: warm-up, then the median of individually timed runs. Shared by the
//! bench and the main job (`src/main.rs` includes this file with `#[path]`).
use cudakernels::cust::event::{Event, EventFlags};
use cudakernels::{Error, GpuStream, Result};

/// Median milliseconds of `reps` runs of `f(i)` (i = repetition index, for rotating inputs)
/// on `gpu`'s stream, after `warmup` untimed runs. Each run has its own pair of events and the
/// host does not wait between runs, as `torch_peers.py` and `native_peers` time theirs: a run's
/// time is the GPU's from the end of the one before, so the host's enqueueing counts only where
/// the GPU waits for it. `BENCH_TIMING=synced` waits for each run before the next (host work and
/// launch latency then count in every run). `BENCH_TIMING=chained` queues `QUEUED` runs between
/// each pair of events and counts a run as the pair's time over `QUEUED`: one run's kernels then
/// follow the last one's with no event between them, as the calls of a model's step do, so
/// launches can overlap (`LaunchOverlap`).
pub fn median_ms(gpu: &GpuStream, warmup: usize, reps: usize, mut f: impl FnMut(usize) -> Result<()>) -> Result<f64> {
    for i in 0..warmup {
        f(i)?;
    }
    gpu.synchronize()?;
    let timing = std::env::var("BENCH_TIMING").unwrap_or_default();
    let synced = timing == "synced";
    let runs = if timing == "chained" { QUEUED } else { 1 };
    let event = || Event::new(EventFlags::DEFAULT).map_err(Error::cuda("cuEventCreate"));
    let pairs = (0..reps).map(|_| Ok((event()?, event()?))).collect::<Result<Vec<_>>>()?;
    let stream = gpu.stream().unwrap();
    for (i, (start, stop)) in pairs.iter().enumerate() {
        start.record(stream).map_err(Error::cuda("cuEventRecord"))?;
        for j in 0..runs {
            f(warmup + i * runs + j)?;
        }
        stop.record(stream).map_err(Error::cuda("cuEventRecord"))?;
        if synced {
            stop.synchronize().map_err(Error::cuda("cuEventSynchronize"))?;
        }
    }
    gpu.synchronize()?;
    let mut times = Vec::with_capacity(reps);
    for (start, stop) in &pairs {
        times.push(stop.elapsed_time_f32(start).map_err(Error::cuda("cuEventElapsedTime"))? as f64 / runs as f64);
    }
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    Ok(times[times.len() / 2])
}

/// Calls queued between one pair of events by [`pipelined_ms`].
pub const QUEUED: usize = 20;

/// Milliseconds per call with `QUEUED` calls of `f(i)` between one pair of events (median of
/// 5 such runs): the host stays ahead, so a single call's launch latency is left out.
pub fn pipelined_ms(gpu: &GpuStream, mut f: impl FnMut(usize) -> Result<()>) -> Result<f64> {
    Ok(median_ms(gpu, 1, 5, |i| (0..QUEUED).try_for_each(|j| f(i * QUEUED + j)))? / QUEUED as f64)
}

/// Host microseconds per call spent enqueueing `f(i)` (wall clock over `QUEUED` calls, which
/// fit in the launch queue), then waits for the stream.
pub fn host_us(gpu: &GpuStream, mut f: impl FnMut(usize) -> Result<()>) -> Result<f64> {
    gpu.synchronize()?;
    let start = std::time::Instant::now();
    for i in 0..QUEUED {
        f(i)?;
    }
    let us = start.elapsed().as_secs_f64() * 1e6 / QUEUED as f64;
    gpu.synchronize()?;
    Ok(us)
}

/// GB/s for `bytes` moved in `ms` milliseconds.
pub fn gbps(bytes: usize, ms: f64) -> f64 {
    bytes as f64 / (ms * 1e-3) / 1e9
}
