//! Strided-batched gemv, one launch per batch: f32 (`sgemv_batched`, section `batched`) on the
//! attention decode shapes and bf16 and f16 A (`gemv`, section `hgemv`: x and y of A's type as
//! cuBLAS's TST and HSH, then y f32 as its TSS and HSS) on the Llama projections and the attention shapes, of data/gemv_shapes.csv, both ops:
//! cold (A rotated past L2), against the 1 GiB copy and a cold copy of the same bytes, each row
//! naming the entry point `Auto` ran. The peers time the same shapes: cuBLAS in `native_peers`, torch in `torch_peers.py`.
use crate::gemv_check::{self, Output};
use crate::gemv_shapes::{self, GemvShape};
use crate::harness::{
    a_value, buffers, copy_ms, rotation, x_value,
    Fmt::{Fixed, Percent, Text},
    Table, REPS, WARMUP,
};
use crate::timing::{gbps, median_ms};
use cudakernels::cust::memory::{DeviceBuffer, DeviceCopy, DeviceSlice};
use cudakernels::{
    bf16, f16, half_gemv_entry_point, sgemv_batched_entry_point, GemvVector, Gpu, GpuStream, HalfWeight, Op, Result,
    SgemvBatch, SgemvLayout, SgemvOptions, SgemvShape,
};

const TABLE: Table = Table::markdown(
    "| types | batch | m | n | op | kernel | µs | GB/s | % of 1 GiB copy | copy µs | % of same-size copy |",
    &[Text, Text, Text, Text, Text, Text, Fixed(1), Fixed(0), Percent(1), Fixed(1), Percent(1)],
);

/// Section `batched`: f32 on the attention shapes.
pub fn run(gpu: &Gpu, copy_bw: f64) -> Result<()> {
    let s = gpu.default_stream();
    println!("### Strided-batched sgemv on the attention decode shapes (cold: A rotated past L2)\n");
    println!("`GB/s` counts A, x and y once; `copy µs`: a cold copy of as many bytes.\n");
    TABLE.header();
    for shape in gemv_shapes::in_set("attention").into_iter().filter(kept) {
        let a = buffers(rotation(s, 4 * shape.a_len()), shape.a_len(), a_value)?;
        let copy = same_size_copy(s, &a, shape.bytes::<f32, f32, f32>())?;
        for &op in [Op::N, Op::T].iter() {
            let kernel = |_: &GpuStream, shape: &_, layout: &_| Ok(sgemv_batched_entry_point(shape, layout));
            let row = Row { types: "f32", shape, op, copy, copy_bw, kernel };
            let call = |s: &GpuStream, a: &_, x: &_, y: &mut _, batch, opts| {
                s.sgemv_batched(shape.m, shape.n, a, x, y, batch, opts)
            };
            time(s, row, &a, (|v| v, |v| v), call)?;
        }
    }
    println!();
    Ok(())
}

/// Section `hgemv`: bf16 A and x with bf16 y (TST), then f32 y (TSS), and the same in f16
/// (HSH, HSS), on every shape.
pub fn run_half(gpu: &Gpu, copy_bw: f64) -> Result<()> {
    let s = gpu.default_stream();
    println!("### Half-precision gemv, bf16 and f16 A (cold: A rotated past L2)\n");
    println!("`GB/s` counts A, x and y once; `copy µs`: a cold copy of as many bytes.\n");
    TABLE.header();
    for shape in gemv_shapes::in_set("llama").into_iter().chain(gemv_shapes::in_set("attention")).filter(kept) {
        half_rows(s, shape, copy_bw, bf16::from_f32, ["bf16 A, x, y (TST)", "bf16 A, x; f32 y (TSS)"])?;
        half_rows(s, shape, copy_bw, f16::from_f32, ["f16 A, x, y (HSH)", "f16 A, x; f32 y (HSS)"])?;
    }
    println!();
    Ok(())
}

/// Whether `BENCH_GEMV_SHAPE` (`BATCHxMxN`, to time or profile one shape) is unset or names `shape`.
fn kept(shape: &GemvShape) -> bool {
    std::env::var("BENCH_GEMV_SHAPE").map_or(true, |w| w == format!("{}x{}x{}", shape.batch, shape.m, shape.n))
}

/// Both ops of `shape` with A and x of H, y of H (`types[0]`), then f32 (`types[1]`).
fn half_rows<H: HalfWeight + GemvVector<H> + Output>(
    s: &GpuStream,
    shape: GemvShape,
    copy_bw: f64,
    of: fn(f32) -> H,
    types: [&'static str; 2],
) -> Result<()>
where
    f32: GemvVector<H>,
{
    let a = buffers(rotation(s, 2 * shape.a_len()), shape.a_len(), |i| of(a_value(i)))?;
    // The bytes, and so the copies, are the same for both ops.
    let (narrow, wide) =
        (same_size_copy(s, &a, shape.bytes::<H, H, H>())?, same_size_copy(s, &a, shape.bytes::<H, H, f32>())?);
    for &op in [Op::N, Op::T].iter() {
        let kernel = half_gemv_entry_point::<H, H, H>;
        half::<H, H>(s, Row { types: types[0], shape, op, copy: narrow, copy_bw, kernel }, &a, of, of)?;
        let kernel = half_gemv_entry_point::<H, H, f32>;
        half::<H, f32>(s, Row { types: types[1], shape, op, copy: wide, copy_bw, kernel }, &a, of, |v| v)?;
    }
    Ok(())
}

impl GemvShape {
    /// One problem's (x, y) lengths under `op`: (n, m) for Op::N, (m, n) for Op::T.
    pub(crate) fn lens(&self, op: Op) -> (usize, usize) {
        if op == Op::N {
            (self.n, self.m)
        } else {
            (self.m, self.n)
        }
    }

    fn a_len(&self) -> usize {
        self.batch * self.m * self.n
    }

    /// Bytes a call reads and writes once (either op): A of `A`s, the larger vector of `X`s or
    /// `Y`s (m entries) and the smaller of the other type, counted as Op::N has them.
    fn bytes<A, X, Y>(&self) -> usize {
        let (a, x, y) = (std::mem::size_of::<A>(), std::mem::size_of::<X>(), std::mem::size_of::<Y>());
        a * self.a_len() + self.batch * (x * self.n + y * self.m)
    }
}

/// What a row prints besides the call's time: its types, shape and op, the same-size copy's ms,
/// the 1 GiB copy's GB/s, and how to name the entry point `Auto` runs for a call on a stream.
#[derive(Clone, Copy)]
struct Row {
    types: &'static str,
    shape: GemvShape,
    op: Op,
    copy: f64,
    copy_bw: f64,
    kernel: fn(&GpuStream, &SgemvShape, &SgemvLayout) -> Result<&'static str>,
}

/// A cold copy moving as many bytes (read + write) as a call that moves `bytes`, from the
/// rotated buffers `srcs`: median ms.
fn same_size_copy<T: DeviceCopy + Copy + Default>(
    s: &GpuStream,
    srcs: &[DeviceBuffer<T>],
    bytes: usize,
) -> Result<f64> {
    let len = (bytes / 2 / std::mem::size_of::<T>()).min(srcs[0].len());
    let mut dst = buffers(1, len, |_| T::default())?;
    copy_ms(s, srcs, &mut dst[0], len)
}

/// `gemv` of the H buffers `a` and an H x (`x_of` makes its elements), y of type Y (`y_of`).
fn half<H: HalfWeight + GemvVector<H> + Copy, Y: GemvVector<H> + Output>(
    s: &GpuStream,
    row: Row,
    a: &[DeviceBuffer<H>],
    x_of: fn(f32) -> H,
    y_of: fn(f32) -> Y,
) -> Result<()> {
    let (m, n) = (row.shape.m, row.shape.n);
    let call = |s: &GpuStream, a: &_, x: &_, y: &mut _, batch, opts| s.gemv(m, n, a, x, y, batch, opts);
    time(s, row, a, (x_of, y_of), call)
}

/// How x's and y's elements are made from f32.
type Makers<X, Y> = (fn(f32) -> X, fn(f32) -> Y);

/// Times `call` cold (A from the rotated `a`), x and y made by `of`, checks one more call
/// ([`gemv_check`]; a wrong output panics) and prints `row`.
fn time<A: DeviceCopy, X: DeviceCopy + Copy, Y: DeviceCopy + Output>(
    s: &GpuStream,
    row: Row,
    a: &[DeviceBuffer<A>],
    of: Makers<X, Y>,
    call: impl Fn(&GpuStream, &DeviceSlice<A>, &DeviceSlice<X>, &mut DeviceSlice<Y>, SgemvBatch, SgemvOptions) -> Result<()>,
) -> Result<()> {
    let Row { types, shape, op, copy, copy_bw, kernel } = row;
    let GemvShape { batch, m, n } = shape;
    let (x_len, y_len) = shape.lens(op);
    let x = buffers(1, batch * x_len, |i| of.0(x_value(i)))?;
    let mut y = buffers(1, batch * y_len, |_| of.1(0.0))?;
    let strides = SgemvBatch { count: batch, stride_a: m * n, stride_x: x_len, stride_y: y_len };
    let opts = SgemvOptions { op, ..SgemvOptions::default() };
    let ms = median_ms(s, WARMUP, REPS, |i| call(s, &*a[i % a.len()], &*x[0], &mut *y[0], strides, opts))?;
    let mut poisoned = buffers(1, batch * y_len, |_| of.1(f32::NAN))?;
    call(s, &*a[0], &*x[0], &mut *poisoned[0], strides, opts)?;
    if let Some(wrong) = gemv_check::mismatch(shape, op, &s.download(&poisoned[0])?, of.1) {
        panic!("{} {:?} {:?}: {}", types, shape, op, wrong);
    }
    let (a_addr, x_addr) = (a[0].as_device_ptr().as_raw(), x[0].as_device_ptr().as_raw());
    let called = SgemvShape { op, m, n, lda: n, a_addr, x_addr };
    let layout = SgemvLayout { incx: 1, incy: 1, batch: strides };
    let bytes = if op == Op::N { shape.bytes::<A, X, Y>() } else { shape.bytes::<A, Y, X>() };
    let bw = gbps(bytes, ms);
    TABLE.row(&[
        types.into(),
        batch.into(),
        m.into(),
        n.into(),
        (if op == Op::N { "N" } else { "T" }).into(),
        kernel(s, &called, &layout)?.into(),
        (ms * 1e3).into(),
        bw.into(),
        (100.0 * bw / copy_bw).into(),
        (copy * 1e3).into(),
        (100.0 * copy / ms).into(),
    ]);
    Ok(())
}
