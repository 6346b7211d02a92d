//! The typed reductions: every op on every element type, 2^28 bytes per input, cold (inputs
//! rotated past L2), against the 1 GiB copy and a cold copy moving as many bytes.
use crate::harness::{
    buffers, for_every_type, rotation, same_size_bw,
    Fmt::{Fixed, Percent, Text},
    Pattern, Table, BYTES, REPS, WARMUP,
};
use crate::timing::{gbps, median_ms};
use cudakernels::{Gpu, GpuStream, Result, TypedOp};

const TABLE: Table = Table::markdown(
    "| type | op | median µs | GB/s | % of copy | % of same-size copy |",
    &[Text, Text, Fixed(1), Fixed(0), Percent(1), Percent(1)],
);
pub fn run(gpu: &Gpu, copy_bw: f64) -> Result<()> {
    let s = gpu.default_stream();
    println!("### Typed reductions, 2^28 bytes per input (cold: rotated)\n");
    let copy_bw = (copy_bw, same_size_bw(s)?);
    TABLE.header();
    for_every_type!(rows(s, copy_bw));
    println!();
    Ok(())
}

/// Every op on element type `T` over its [`Pattern`]; `copy_bw` = (1 GiB copy, same-size copy).
fn rows<T: Pattern>(s: &GpuStream, copy_bw: (f64, f64)) -> Result<()> {
    let n = BYTES / std::mem::size_of::<T>();
    let bufs = buffers(rotation(s, BYTES), n, T::pattern)?;
    let mut out = buffers(1, 2, |_| T::default())?;
    let mut sum_out = buffers(1, 1, |_| T::Sum::default())?;
    for op in TypedOp::ALL.iter() {
        let ms = median_ms(s, WARMUP, REPS, |i| {
            let input = &bufs[i % bufs.len()];
            match op {
                TypedOp::Sum => s.sum_into(input, &mut sum_out[0]),
                _ => s.reduce_into(*op, input, &mut out[0]),
            }
        })?;
        let bw = gbps(BYTES, ms);
        let (all, same) = (100.0 * bw / copy_bw.0, 100.0 * bw / copy_bw.1);
        TABLE.row(&[T::NAME.into(), op.name().into(), (ms * 1e3).into(), bw.into(), all.into(), same.into()]);
    }
    Ok(())
}
