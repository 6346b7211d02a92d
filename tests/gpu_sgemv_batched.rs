//! sgemv with BLAS strides (incx, incy) and strided batches on the GPU, exact against a CPU
//! reference: small-integer data make every summation order exact. y is poisoned where beta = 0
//! (NaN: it must not be read), and the elements between the problems' entries hold a sentinel
//! that must survive.
mod common;
use common::{download, gpu, upload, Rng};
use cudakernels::{Error, GpuStream, Op, SgemvBatch, SgemvKernel, SgemvOptions};

/// What lies between the entries the call writes; it must be left as it is.
const SENTINEL: f32 = 12345.0;

/// One call: op, m, n, lda, incx, incy and the batch; alpha and beta; the elements before A,
/// x and y in their buffers (unaligned views).
#[derive(Clone, Copy, Debug)]
struct Call {
    op: Op,
    m: usize,
    n: usize,
    lda: usize,
    incx: usize,
    incy: usize,
    batch: SgemvBatch,
    alpha: f32,
    beta: f32,
    offsets: (usize, usize, usize),
}

impl Call {
    fn lens(&self) -> (usize, usize) {
        if self.op == Op::N {
            (self.n, self.m)
        } else {
            (self.m, self.n)
        }
    }

    /// Elements A, x and y span for the whole batch.
    fn spans(&self) -> (usize, usize, usize) {
        let (x_len, y_len) = self.lens();
        let span = |one: usize, stride: usize| if one == 0 { 0 } else { (self.batch.count - 1) * stride + one };
        let a_one = if self.m == 0 { 0 } else { (self.m - 1) * self.lda + self.n };
        let entries = |len: usize, inc: usize| if len == 0 { 0 } else { 1 + (len - 1) * inc };
        (
            span(a_one, self.batch.stride_a),
            span(entries(x_len, self.incx), self.batch.stride_x),
            span(entries(y_len, self.incy), self.batch.stride_y),
        )
    }

    fn opts(&self, kernel: SgemvKernel) -> SgemvOptions {
        SgemvOptions {
            alpha: self.alpha,
            beta: self.beta,
            lda: Some(self.lda),
            kernel,
            op: self.op,
            incx: self.incx,
            incy: self.incy,
        }
    }
}

/// Integers in -3..=3 (products and sums of a few thousand are exact in f32).
fn small_ints(rng: &mut Rng, len: usize) -> Vec<f32> {
    (0..len).map(|_| rng.below(7) as f32 - 3.0).collect()
}

/// The whole y buffer the call must leave, from A, x and y as uploaded (offsets included).
fn reference(c: &Call, a: &[f32], x: &[f32], y0: &[f32]) -> Vec<f32> {
    let (a, x) = (&a[c.offsets.0..], &x[c.offsets.1..]);
    let mut y = y0.to_vec();
    let (x_len, y_len) = c.lens();
    for b in 0..c.batch.count {
        for i in 0..y_len {
            let mut dot = 0.0f64;
            for k in 0..x_len {
                let (row, col) = if c.op == Op::N { (i, k) } else { (k, i) };
                let av = a[b * c.batch.stride_a + row * c.lda + col] as f64;
                dot += av * x[b * c.batch.stride_x + k * c.incx] as f64;
            }
            let at = c.offsets.2 + b * c.batch.stride_y + i * c.incy;
            let summed = if c.alpha == 0.0 || x_len == 0 { 0.0 } else { c.alpha as f64 * dot };
            y[at] = if c.beta == 0.0 { summed as f32 } else { (summed + c.beta as f64 * y0[at] as f64) as f32 };
        }
    }
    y
}

/// y's initial buffer: the sentinel everywhere, the problems' entries small integers (NaN when
/// beta = 0, which must not be read).
fn initial_y(c: &Call, rng: &mut Rng, len: usize) -> Vec<f32> {
    let mut y = vec![SENTINEL; len];
    let (_, y_len) = c.lens();
    for b in 0..c.batch.count {
        for i in 0..y_len {
            let v = if c.beta == 0.0 { f32::NAN } else { rng.below(7) as f32 - 3.0 };
            y[c.offsets.2 + b * c.batch.stride_y + i * c.incy] = v;
        }
    }
    y
}

/// Runs `c` with `kernel` on fresh data and compares the whole y buffer exactly. With
/// `nan_inputs`, A and x are all NaN (alpha = 0 must read neither).
fn check(gpu: &GpuStream, rng: &mut Rng, c: &Call, kernel: SgemvKernel, nan_inputs: bool) {
    let (a_span, x_span, y_span) = c.spans();
    let (a_len, x_len, y_len) = (c.offsets.0 + a_span, c.offsets.1 + x_span, c.offsets.2 + y_span);
    let (a, x) = if nan_inputs {
        (vec![f32::NAN; a_len], vec![f32::NAN; x_len])
    } else {
        (small_ints(rng, a_len), small_ints(rng, x_len))
    };
    let y0 = initial_y(c, rng, y_len);
    let want = reference(c, &a, &x, &y0);
    let (da, dx, dy) = (upload(&a), upload(&x), upload(&y0));
    let (a_view, x_view) = (da.index(c.offsets.0..), dx.index(c.offsets.1..));
    let mut y_view = dy.index(c.offsets.2..);
    let what = format!("seed {} {:?} {:?}", rng.seed, kernel, c);
    gpu.sgemv_batched(c.m, c.n, &a_view, &x_view, &mut y_view, c.batch, c.opts(kernel))
        .unwrap_or_else(|e| panic!("{}: {}", what, e));
    let got = download(gpu, &dy);
    for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
        assert!(g == w || (g.is_nan() && w.is_nan()), "{}: y[{}] = {}, want {}", what, i, g, w);
    }
}

fn single(op: Op, m: usize, n: usize, incx: usize, incy: usize) -> Call {
    Call { op, m, n, lda: n, incx, incy, batch: SgemvBatch::ONE, alpha: 1.0, beta: 0.0, offsets: (0, 0, 0) }
}

/// The kernels that take any layout, by op.
fn batched_kernel(op: Op) -> SgemvKernel {
    if op == Op::N {
        SgemvKernel::BatchedN
    } else {
        SgemvKernel::BatchedT
    }
}

#[test]
fn incx_and_incy_of_1_2_and_3() {
    let handle = match gpu("incx_and_incy_of_1_2_and_3") {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let mut rng = Rng::fresh("sgemv_inc");
    let shapes = [(1usize, 1usize), (31, 33), (33, 31), (64, 128), (512, 64), (100, 1000), (1000, 100), (3, 4100)];
    for &op in [Op::N, Op::T].iter() {
        for &(m, n) in shapes.iter() {
            for &(incx, incy) in [(1usize, 1usize), (2, 1), (1, 2), (3, 3), (2, 3)].iter() {
                for &(alpha, beta) in [(1.0f32, 0.0f32), (-2.0, 3.0)].iter() {
                    let c = Call { lda: n + 1, alpha, beta, offsets: (1, 2, 3), ..single(op, m, n, incx, incy) };
                    check(gpu, &mut rng, &c, SgemvKernel::Auto, false);
                    check(gpu, &mut rng, &c, batched_kernel(op), false);
                }
            }
        }
    }
}

#[test]
fn strided_batches_of_1_2_and_1000() {
    let handle = match gpu("strided_batches_of_1_2_and_1000") {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let mut rng = Rng::fresh("sgemv_batched");
    for &op in [Op::N, Op::T].iter() {
        for &(m, n, counts) in
            [(17usize, 9usize, &[1usize, 2, 1000][..]), (64, 64, &[1, 2, 1000]), (33, 130, &[2, 7])].iter()
        {
            for &count in counts.iter() {
                for &(incx, incy) in [(1usize, 1usize), (2, 3)].iter() {
                    let mut c = Call { lda: n + 3, beta: 2.0, offsets: (3, 1, 2), ..single(op, m, n, incx, incy) };
                    let (a_one, x_one, y_one) = c.spans();
                    // Strides past each problem's span by amounts that are not multiples of 4.
                    c.batch = SgemvBatch { count, stride_a: a_one + 5, stride_x: x_one + 1, stride_y: y_one + 2 };
                    check(gpu, &mut rng, &c, SgemvKernel::Auto, false);
                    // A and x shared by every problem (stride 0); y back to back.
                    c.batch = SgemvBatch { count, stride_a: 0, stride_x: 0, stride_y: y_one };
                    check(gpu, &mut rng, &c, SgemvKernel::Auto, false);
                }
            }
        }
    }
}

#[test]
fn attention_decode_batches() {
    let handle = match gpu("attention_decode_batches") {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let mut rng = Rng::fresh("sgemv_attention");
    // Heads × (KV length × head size): scores (Op::N, y per KV position) and values (Op::T).
    for &(heads, kv, d) in [(32usize, 512usize, 64usize), (64, 512, 128), (8, 4096, 128)].iter() {
        for &op in [Op::N, Op::T].iter() {
            let (x_len, y_len) = if op == Op::N { (d, kv) } else { (kv, d) };
            let batch = SgemvBatch { count: heads, stride_a: kv * d, stride_x: x_len, stride_y: y_len };
            let c = Call { batch, ..single(op, kv, d, 1, 1) };
            check(gpu, &mut rng, &c, SgemvKernel::Auto, false);
        }
    }
}

#[test]
fn edge_shapes_and_alpha_zero() {
    let handle = match gpu("edge_shapes_and_alpha_zero") {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let mut rng = Rng::fresh("sgemv_batched_edges");
    for &op in [Op::N, Op::T].iter() {
        for &(m, n) in [(0usize, 5usize), (5, 0), (1, 1), (32, 32), (255, 257), (4, 5000)].iter() {
            for &count in [1usize, 3].iter() {
                let mut c = Call { lda: n + 2, beta: -1.0, ..single(op, m, n, 2, 3) };
                let (a_one, x_one, y_one) = c.spans();
                c.batch = SgemvBatch { count, stride_a: a_one + 1, stride_x: x_one + 3, stride_y: y_one + 1 };
                check(gpu, &mut rng, &c, SgemvKernel::Auto, false);
                // alpha = 0: y = beta·y, A and x (all NaN) unread; beta = 0 then writes zeros.
                for &beta in [0.0f32, -1.0].iter() {
                    check(gpu, &mut rng, &Call { alpha: 0.0, beta, ..c }, SgemvKernel::Auto, true);
                }
            }
        }
    }
}

#[test]
fn bad_layouts_are_refused_before_any_launch() {
    let handle = match gpu("bad_layouts_are_refused_before_any_launch") {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let (m, n) = (8usize, 4usize);
    let a = upload(&vec![1.0f32; 8 * m * n]);
    let x = upload(&vec![1.0f32; 64]);
    let y_host = vec![SENTINEL; 64];
    let mut y = upload(&y_host);
    let opts = SgemvOptions { incx: 2, incy: 2, ..SgemvOptions::default() };
    let batch = |count, stride_y| SgemvBatch { count, stride_a: m * n, stride_x: 7, stride_y };
    let mut call = |batch: SgemvBatch, opts: SgemvOptions| gpu.sgemv_batched(m, n, &a, &x, &mut y, batch, opts);
    assert_eq!(call(SgemvBatch::ONE, SgemvOptions { incx: 0, ..opts }), Err(Error::Stride { what: "incx", value: 0 }));
    assert_eq!(call(SgemvBatch::ONE, SgemvOptions { incy: 0, ..opts }), Err(Error::Stride { what: "incy", value: 0 }));
    // Per problem A spans 7·4 + 4 = 32 elements, x 1 + 3·2 = 7 and y 1 + 7·2 = 15: 14 apart,
    // two problems' y would interleave.
    assert_eq!(call(batch(2, 14), opts), Err(Error::Overlap { what: "y", with: "y" }));
    // Five problems 15 apart need 4·15 + 15 = 75 elements of y, 64 are there.
    assert_eq!(call(batch(5, 15), opts), Err(Error::LengthMismatch { what: "y", expected: 75, actual: 64 }));
    let short_x = SgemvBatch { stride_x: 20, ..batch(4, 15) };
    assert_eq!(call(short_x, opts), Err(Error::LengthMismatch { what: "x", expected: 67, actual: 64 }));
    let named = SgemvOptions { kernel: SgemvKernel::WarpRowsScalar, ..opts };
    assert!(matches!(call(batch(2, 15), named), Err(Error::Unsupported { .. })));
    // y inside x (a view is Copy, so `&mut` proves nothing).
    let (xs, mut ys) = (upload(&vec![1.0f32; 64]), upload(&[0.0f32]));
    let mut y_on_x = xs.index(..15);
    assert_eq!(
        gpu.sgemv_batched(m, n, &a, &xs, &mut y_on_x, SgemvBatch::ONE, opts),
        Err(Error::Overlap { what: "y", with: "x" })
    );
    // An empty batch is accepted and does nothing.
    assert_eq!(gpu.sgemv_batched(m, n, &a, &x, &mut ys, batch(0, 15), opts), Ok(()));
    assert_eq!(download(gpu, &ys), vec![0.0f32]);
    assert_eq!(download(gpu, &y), y_host, "no refused call wrote y");
}
