//! The reduction ladder: f32 sum by every kernel step (block 256, second-pass finish) and by
//! Auto, cold (inputs rotated past L2), against the 1 GiB copy and step over step.
use crate::harness::{
    buffers, rotation, small_int, Csv,
    Fmt::{Fixed, Percent, Skip, Text, Times},
    Table, REPS, WARMUP,
};
use crate::timing::{gbps, median_ms};
use cudakernels::cust::memory::DeviceBuffer;
use cudakernels::{Error, Finish, Gpu, GpuStream, LadderKernel, ReduceStrategy, Result};

const TABLE: Table = Table {
    header: "| kernel | finish | block | grain | median µs | GB/s | % of copy | step speedup | cumulative |",
    fmts: &[Skip, Text, Text, Text, Text, Fixed(1), Fixed(0), Percent(1), Times(2), Times(1)],
    csv: Some(Csv {
        file: "ladder.csv",
        header: "n,kernel,finish,block,grain,median_us,gbps,pct_copy",
        fmts: &[Text, Text, Text, Text, Text, Fixed(2), Fixed(1), Fixed(1), Skip, Skip],
    }),
};

pub fn run(gpu: &Gpu, copy_bw: f64) -> Result<()> {
    for &log_n in [20usize, 24, 28].iter() {
        one_size(gpu.default_stream(), copy_bw, log_n)?;
    }
    Ok(())
}

/// The ladder's steps in order, each with the grain it is shown at, then Auto.
fn steps() -> Vec<(String, ReduceStrategy)> {
    let mut steps: Vec<(String, ReduceStrategy)> = LadderKernel::ALL
        .iter()
        .map(|&kernel| {
            let grain = match kernel {
                LadderKernel::GlobalStride | LadderKernel::LocalStride | LadderKernel::WarpShuffle => 16,
                _ => 1,
            };
            (format!("{:?}", kernel), ReduceStrategy::Ladder { kernel, finish: Finish::SecondPass, block: 256, grain })
        })
        .collect();
    steps.push(("Auto".into(), ReduceStrategy::Auto));
    steps
}

fn one_size(s: &GpuStream, copy_bw: f64, log_n: usize) -> Result<()> {
    let n = 1usize << log_n;
    let bufs = buffers(rotation(s, 4 * n), n, small_int)?;
    let mut out = DeviceBuffer::<f32>::zeroed(1).map_err(Error::cuda("cuMemAlloc"))?;
    println!("### f32 sum, n = 2^{} ({} MiB, cold: {} buffers rotated)\n", log_n, (4 * n) >> 20, bufs.len());
    TABLE.header();
    let (mut first, mut prev) = (0.0, 0.0);
    for (name, strategy) in steps() {
        let ms =
            median_ms(s, WARMUP, REPS, |i| s.reduce_sum_into(&bufs[i % bufs.len()], &mut out, strategy).map(|_| ()))?;
        let (_, finish, block, grain) = strategy.resolve(4 * n);
        if first == 0.0 {
            first = ms;
            prev = ms;
        }
        let bw = gbps(4 * n, ms);
        TABLE.row(&[
            n.into(),
            name.into(),
            finish.into(),
            block.into(),
            grain.into(),
            (ms * 1e3).into(),
            bw.into(),
            (100.0 * bw / copy_bw).into(),
            (prev / ms).into(),
            (first / ms).into(),
        ]);
        prev = ms;
    }
    println!();
    Ok(())
}
