//! The typed reductions: every op on every element type, 2^28 bytes per input, cold (inputs
//! rotated past L2), against the 1 GiB copy.
use crate::harness::{
    buffers, rotation,
    Fmt::{Fixed, Percent, Text},
    Table, REPS, WARMUP,
};
use crate::timing::{gbps, median_ms};
use cudakernels::{Gpu, GpuStream, Result, TypedElement, TypedOp};

const TABLE: Table =
    Table::markdown("| type | op | median µs | GB/s | % of copy |", &[Text, Text, Fixed(1), Fixed(0), Percent(1)]);

pub fn run(gpu: &Gpu, copy_bw: f64) -> Result<()> {
    let s = gpu.default_stream();
    println!("### Typed reductions, 2^28 bytes per input (cold: rotated)\n");
    TABLE.header();
    rows::<u8, _>(s, copy_bw, |i| (i * 31 % 251) as u8)?;
    rows::<i8, _>(s, copy_bw, |i| (i * 31 % 251) as i8)?;
    rows::<u16, _>(s, copy_bw, |i| (i * 31 % 65521) as u16)?;
    rows::<i16, _>(s, copy_bw, |i| (i * 31 % 65521) as i16)?;
    rows::<i32, _>(s, copy_bw, |i| (i as i32).wrapping_mul(2654435761u32 as i32))?;
    rows::<u32, _>(s, copy_bw, |i| (i as u32).wrapping_mul(2654435761))?;
    rows::<f32, _>(s, copy_bw, |i| (i % 1000) as f32 * 0.5 - 250.0)?;
    rows::<f64, _>(s, copy_bw, |i| (i % 1000) as f64 * 0.5 - 250.0)?;
    println!();
    Ok(())
}

/// Every op on element type `T`, inputs filled by `fill`.
fn rows<T: TypedElement, F: Fn(usize) -> T>(s: &GpuStream, copy_bw: f64, fill: F) -> Result<()> {
    let bytes = 1usize << 28;
    let n = bytes / std::mem::size_of::<T>();
    let bufs = buffers(rotation(s, bytes), n, fill)?;
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
        let bw = gbps(bytes, ms);
        TABLE.row(&[T::NAME.into(), op.name().into(), (ms * 1e3).into(), bw.into(), (100.0 * bw / copy_bw).into()]);
    }
    Ok(())
}
