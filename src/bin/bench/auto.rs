//! f32 sum by Auto alone, with many repetitions, at the sizes torch.sum is compared on and at
//! n = 1 (one block: the launch floor of the same path): cold and queued back to back against
//! the 1 GiB copy, the same input hot (in L2) and a cold copy of the same bytes.
use crate::harness::{
    buffers, copy_ms, pow2, rotation, small_int,
    Fmt::{Fixed, Percent, Text},
    Table, WARMUP,
};
use crate::timing::{gbps, median_ms, pipelined_ms};
use cudakernels::{Gpu, ReduceStrategy, Result};

/// Timed repetitions per figure (more than elsewhere: the small sizes are noisy).
const AUTO_REPS: usize = 300;

const TABLE: Table = Table::markdown(
    "| n | finish | block | grain | cold µs | cold pipelined µs | cold GB/s | % of copy | hot µs | same-size copy, cold µs |",
    &[Text, Text, Text, Text, Fixed(2), Fixed(2), Fixed(0), Percent(1), Fixed(2), Fixed(2)],
);

pub fn run(gpu: &Gpu, copy_bw: f64) -> Result<()> {
    let s = gpu.default_stream();
    let median = |f: &mut dyn FnMut(usize) -> Result<()>| median_ms(s, WARMUP, AUTO_REPS, f);
    println!("### f32 sum, Auto, median of {} after {} warm-up\n", AUTO_REPS, WARMUP);
    TABLE.header();
    for &log_n in [0usize, 20, 24, 28].iter() {
        let n = 1usize << log_n;
        let bufs = buffers(rotation(s, 4 * n).min(1024), n, small_int)?;
        let mut out = buffers(1, 1, |_| 0.0f32)?;
        let mut call =
            |i: usize| s.reduce_sum_into(&bufs[i % bufs.len()], &mut out[0], ReduceStrategy::Auto).map(|_| ());
        let cold = median(&mut call)?;
        let piped = pipelined_ms(s, &mut call)?;
        let hot = median(&mut |_| s.reduce_sum_into(&bufs[0], &mut out[0], ReduceStrategy::Auto).map(|_| ()))?;
        let mut dst = buffers(1, n, |_| 0.0f32)?;
        let copy = copy_ms(s, &bufs, &mut dst[0], n)?;
        let (_, finish, block, grain) = ReduceStrategy::Auto.resolve(4 * n);
        let bw = gbps(4 * n, cold);
        TABLE.row(&[
            pow2(log_n),
            finish.into(),
            block.into(),
            grain.into(),
            (cold * 1e3).into(),
            (piped * 1e3).into(),
            bw.into(),
            (100.0 * bw / copy_bw).into(),
            (hot * 1e3).into(),
            (copy * 1e3).into(),
        ]);
    }
    println!();
    Ok(())
}
