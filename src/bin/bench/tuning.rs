//! The fast path's grid: Vectorized f32 sum over block size × vectors per thread, both fast
//! finishes, at three sizes, cold; per call alone, queued back to back and on the host clock,
//! against the 1 GiB copy.
use crate::harness::{
    buffers, pow2, rotation, small_int,
    Fmt::{Fixed, Percent, Text},
    Table, REPS, WARMUP,
};
use crate::timing::{gbps, host_us, median_ms, pipelined_ms};
use cudakernels::{Finish, Gpu, GpuStream, LadderKernel, ReduceStrategy, Result};

const TABLE: Table = Table::markdown(
    "| n | finish | block | grain | grid | median µs | pipelined µs | host µs | GB/s | % of copy |",
    &[Text, Text, Text, Text, Text, Fixed(1), Fixed(1), Fixed(1), Fixed(0), Percent(1)],
);

/// `pipelined` is the time per call with calls queued back to back (`timing::pipelined_ms`);
/// `host` the CPU time to enqueue one call.
pub fn run(gpu: &Gpu, copy_bw: f64) -> Result<()> {
    let s = gpu.default_stream();
    println!("### Fast-path tuning: Vectorized, f32 sum, cold\n");
    TABLE.header();
    for &log_n in [20usize, 24, 28].iter() {
        let n = 1usize << log_n;
        let bufs = buffers(rotation(s, 4 * n), n, small_int)?;
        let mut out = buffers(1, 1, |_| 0.0f32)?;
        for &finish in [Finish::LastBlock, Finish::Flagged].iter() {
            for (&block, &grain) in
                [256u32, 512, 1024].iter().flat_map(|b| std::iter::repeat(b).zip([1u32, 2, 4, 8].iter()))
            {
                let strategy = ReduceStrategy::Ladder { kernel: LadderKernel::Vectorized, finish, block, grain };
                let mut call = |i: usize| s.reduce_sum_into(&bufs[i % bufs.len()], &mut out[0], strategy).map(|_| ());
                let ms = median_ms(s, WARMUP, REPS, &mut call)?;
                let piped = pipelined_ms(s, &mut call)?;
                let host = host_us(s, &mut call)?;
                let bw = gbps(4 * n, ms);
                TABLE.row(&[
                    pow2(log_n),
                    finish.into(),
                    block.into(),
                    grain.into(),
                    grid(s, n, block, grain).into(),
                    (ms * 1e3).into(),
                    (piped * 1e3).into(),
                    host.into(),
                    bw.into(),
                    (100.0 * bw / copy_bw).into(),
                ]);
            }
        }
    }
    println!();
    Ok(())
}

fn grid(s: &GpuStream, n: usize, block: u32, grain: u32) -> usize {
    cudakernels::ladder_grid(LadderKernel::Vectorized, n, block, grain, s.sm_count(), s.max_threads_per_sm())
}
