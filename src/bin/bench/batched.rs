//! Strided-batched sgemv (`sgemv_batched`, one launch) on the attention decode shapes of
//! data/gemv_batched_shapes.csv, both ops: cold (A rotated past L2), against the 1 GiB copy and
//! a cold copy of the same bytes. The peers time the same shapes: cublasSgemvStridedBatched in
//! `native_peers`, torch.bmm in `torch_peers.py`.
use crate::harness::{
    a_rotation, buffers, same_size_copy_ms, x_value,
    Fmt::{Fixed, Percent, Text},
    Table, REPS, WARMUP,
};
use crate::timing::{gbps, median_ms};
use cudakernels::{Gpu, Op, Result, SgemvBatch, SgemvOptions};

/// The file, as the binary carries it: `batch,m,n` rows after `#` comments.
const SHAPES: &str = include_str!("../../../data/gemv_batched_shapes.csv");

const TABLE: Table = Table::markdown(
    "| batch | m | n | op | µs | GB/s | % of 1 GiB copy | copy µs | % of same-size copy |",
    &[Text, Text, Text, Text, Fixed(1), Fixed(0), Percent(1), Fixed(1), Percent(1)],
);

/// The (batch, m, n) rows of the shapes file.
fn shapes() -> Vec<(usize, usize, usize)> {
    let rows = SHAPES.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')).skip(1);
    rows.map(|l| {
        let v: Vec<usize> =
            l.split(',').map(|f| f.trim().parse().expect("data/gemv_batched_shapes.csv: a number")).collect();
        (v[0], v[1], v[2])
    })
    .collect()
}

pub fn run(gpu: &Gpu, copy_bw: f64) -> Result<()> {
    let s = gpu.default_stream();
    println!("### Strided-batched sgemv, attention decode shapes (cold: A rotated past L2)\n");
    println!("`GB/s` counts A, x and y once; `copy µs`: a cold copy of as many bytes.\n");
    TABLE.header();
    for (batch, m, n) in shapes() {
        let a_len = batch * m * n;
        let a = a_rotation(s, a_len)?;
        let bytes = 4 * (a_len + batch * (m + n));
        let copy = same_size_copy_ms(s, &a, a_len, bytes)?;
        for &op in [Op::N, Op::T].iter() {
            let (x_len, y_len) = if op == Op::N { (n, m) } else { (m, n) };
            let x = buffers(1, batch * x_len, x_value)?;
            let mut y = buffers(1, batch * y_len, |_| 0.0f32)?;
            let strides = SgemvBatch { count: batch, stride_a: m * n, stride_x: x_len, stride_y: y_len };
            let opts = SgemvOptions { op, ..SgemvOptions::default() };
            let ms = median_ms(s, WARMUP, REPS, |i| {
                s.sgemv_batched(m, n, &a[i % a.len()], &x[0], &mut y[0], strides, opts)
            })?;
            let bw = gbps(bytes, ms);
            TABLE.row(&[
                batch.into(),
                m.into(),
                n.into(),
                (if op == Op::N { "N" } else { "T" }).into(),
                (ms * 1e3).into(),
                bw.into(),
                (100.0 * bw / copy_bw).into(),
                (copy * 1e3).into(),
                (100.0 * copy / ms).into(),
            ]);
        }
    }
    println!();
    Ok(())
}
