//! Half-precision gemv (`GpuStream::gemv`: A f16 or bf16, x and y each f32 or A's type) on the GPU,
//! exact against a CPU reference: small-integer data make every f32 sum exact, so y is that
//! sum rounded once to y's type (nearest even, as `half`'s `from_f32`). y is poisoned where
//! beta = 0 (NaN), and the elements between the problems' entries hold a sentinel.
mod common;
use common::{download, gpu, upload, Rng};
use cudakernels::cust::memory::DeviceCopy;
use cudakernels::{bf16, f16, Error, GemvVector, GpuStream, HalfWeight, Op, SgemvBatch, SgemvKernel, SgemvOptions};

/// A type of the test's buffers, from and to f32.
trait El: DeviceCopy + Copy + Default + std::fmt::Debug {
    fn of(v: f32) -> Self;
    fn f(self) -> f32;
}

macro_rules! el {
    ($($t:ty: $of:expr, $f:expr;)*) => {$(
        impl El for $t {
            fn of(v: f32) -> Self {
                $of(v)
            }
            fn f(self) -> f32 {
                $f(self)
            }
        }
    )*};
}
el! {
    f32: |v| v, |v| v;
    f16: f16::from_f32, f16::to_f32;
    bf16: bf16::from_f32, bf16::to_f32;
}

/// One call's shape and layout; offsets are the elements before A, x and y in their buffers.
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
    fn new(op: Op, m: usize, n: usize) -> Call {
        let batch = SgemvBatch::ONE;
        Call { op, m, n, lda: n, incx: 1, incy: 1, batch, alpha: 1.0, beta: 0.0, offsets: (0, 0, 0) }
    }

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
        let entries = |len: usize, inc: usize| if len == 0 { 0 } else { 1 + (len - 1) * inc };
        let a_one = if self.m == 0 { 0 } else { (self.m - 1) * self.lda + self.n };
        (
            span(a_one, self.batch.stride_a),
            span(entries(x_len, self.incx), self.batch.stride_x),
            span(entries(y_len, self.incy), self.batch.stride_y),
        )
    }

    /// This call's problems with strides past each span by amounts not multiples of 4.
    fn batched(self, count: usize) -> Call {
        let (a, x, y) = self.spans();
        Call { batch: SgemvBatch { count, stride_a: a + 3, stride_x: x + 1, stride_y: y + 2 }, ..self }
    }

    fn opts(&self) -> SgemvOptions {
        let (alpha, beta, lda, op, incx, incy) = (self.alpha, self.beta, Some(self.lda), self.op, self.incx, self.incy);
        SgemvOptions { alpha, beta, lda, op, incx, incy, kernel: SgemvKernel::Auto }
    }

    /// Where problem b's y entry i lies in y's buffer.
    fn y_at(&self, b: usize, i: usize) -> usize {
        self.offsets.2 + b * self.batch.stride_y + i * self.incy
    }
}

/// The whole y buffer `c` must leave, from A, x and y as uploaded.
fn reference<A: El, X: El, Y: El>(c: &Call, a: &[A], x: &[X], y0: &[Y]) -> Vec<Y> {
    let (a, x) = (&a[c.offsets.0..], &x[c.offsets.1..]);
    let mut y = y0.to_vec();
    let (x_len, y_len) = c.lens();
    for b in 0..c.batch.count {
        for i in 0..y_len {
            let mut dot = 0.0f64;
            for k in 0..x_len {
                let (row, col) = if c.op == Op::N { (i, k) } else { (k, i) };
                let av = a[b * c.batch.stride_a + row * c.lda + col].f() as f64;
                dot += av * x[b * c.batch.stride_x + k * c.incx].f() as f64;
            }
            let at = c.y_at(b, i);
            let summed = if c.alpha == 0.0 || x_len == 0 { 0.0 } else { c.alpha as f64 * dot };
            let value = if c.beta == 0.0 { summed } else { summed + c.beta as f64 * y0[at].f() as f64 };
            y[at] = Y::of(value as f32);
        }
    }
    y
}

/// Runs `c` on fresh data (A and x all NaN with `nan_inputs`) and compares y's buffer exactly.
fn check<A: HalfWeight + El, X: GemvVector<A> + El, Y: GemvVector<A> + El>(
    gpu: &GpuStream,
    rng: &mut Rng,
    c: &Call,
    nan_inputs: bool,
) {
    let (a_span, x_span, y_span) = c.spans();
    let int = |rng: &mut Rng| if nan_inputs { f32::NAN } else { rng.below(7) as f32 - 3.0 };
    let a: Vec<A> = (0..c.offsets.0 + a_span).map(|_| A::of(int(rng))).collect();
    let x: Vec<X> = (0..c.offsets.1 + x_span).map(|_| X::of(int(rng))).collect();
    let mut y0 = vec![Y::of(12345.0); c.offsets.2 + y_span];
    for b in 0..c.batch.count {
        for i in 0..c.lens().1 {
            y0[c.y_at(b, i)] = Y::of(if c.beta == 0.0 { f32::NAN } else { rng.below(7) as f32 - 3.0 });
        }
    }
    let want = reference(c, &a, &x, &y0);
    let (da, dx, dy) = (upload(&a), upload(&x), upload(&y0));
    let (a_view, x_view, mut y_view) = (da.index(c.offsets.0..), dx.index(c.offsets.1..), dy.index(c.offsets.2..));
    let types = (<A as HalfWeight>::NAME, <X as GemvVector<A>>::NAME, <Y as GemvVector<A>>::NAME);
    let what = format!("seed {} A, x, y {:?} {:?}", rng.seed, types, c);
    gpu.gemv(c.m, c.n, &a_view, &x_view, &mut y_view, c.batch, c.opts()).unwrap_or_else(|e| panic!("{}: {}", what, e));
    let got = download(gpu, &dy);
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        let same = g.f() == w.f() || (g.f().is_nan() && w.f().is_nan());
        assert!(same, "{}: y[{}] = {:?}, want {:?}", what, i, g, w);
    }
}

/// [`check`] for every type triple: each weight type with x and y each f32 or its own type.
fn each_triple(gpu: &GpuStream, rng: &mut Rng, c: &Call, nan_inputs: bool) {
    check::<f16, f32, f32>(gpu, rng, c, nan_inputs);
    check::<f16, f32, f16>(gpu, rng, c, nan_inputs);
    check::<f16, f16, f32>(gpu, rng, c, nan_inputs);
    check::<f16, f16, f16>(gpu, rng, c, nan_inputs);
    check::<bf16, f32, f32>(gpu, rng, c, nan_inputs);
    check::<bf16, f32, bf16>(gpu, rng, c, nan_inputs);
    check::<bf16, bf16, f32>(gpu, rng, c, nan_inputs);
    check::<bf16, bf16, bf16>(gpu, rng, c, nan_inputs);
}

#[test]
fn every_type_triple_and_op_with_alpha_beta_lda_and_views() {
    let handle = match gpu("every_type_triple_and_op_with_alpha_beta_lda_and_views") {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let mut rng = Rng::fresh("gemv_half");
    let shapes = [(1usize, 1usize), (31, 33), (33, 31), (64, 128), (512, 64), (100, 1000), (1000, 100), (3, 4100)];
    for &op in [Op::N, Op::T].iter() {
        for &(m, n) in shapes.iter() {
            for &(alpha, beta) in [(1.0f32, 0.0f32), (-2.0, 3.0)].iter() {
                each_triple(gpu, &mut rng, &Call { alpha, beta, ..Call::new(op, m, n) }, false);
                let views = Call { lda: n + 1, alpha, beta, offsets: (1, 3, 5), ..Call::new(op, m, n) };
                each_triple(gpu, &mut rng, &views, false);
            }
        }
    }
}

#[test]
fn incx_incy_and_strided_batches() {
    let handle = match gpu("incx_incy_and_strided_batches") {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let mut rng = Rng::fresh("gemv_half_batched");
    for &op in [Op::N, Op::T].iter() {
        for &(incx, incy) in [(1usize, 1usize), (2, 1), (1, 2), (3, 3)].iter() {
            let c = Call { incx, incy, lda: 70, beta: 2.0, offsets: (2, 1, 3), ..Call::new(op, 37, 65) };
            for &count in [1usize, 2, 1000].iter() {
                each_triple(gpu, &mut rng, &c.batched(count), false);
            }
        }
        // Attention decode: 32 heads of 512 × 128, problems back to back.
        let (x_len, y_len) = if op == Op::N { (128, 512) } else { (512, 128) };
        let heads = SgemvBatch { count: 32, stride_a: 512 * 128, stride_x: x_len, stride_y: y_len };
        each_triple(gpu, &mut rng, &Call { batch: heads, ..Call::new(op, 512, 128) }, false);
    }
}

#[test]
fn edge_shapes_and_alpha_zero() {
    let handle = match gpu("edge_shapes_and_alpha_zero") {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let mut rng = Rng::fresh("gemv_half_edges");
    for &op in [Op::N, Op::T].iter() {
        for &(m, n) in [(0usize, 5usize), (5, 0), (1, 1), (32, 32), (255, 257), (4, 5000)].iter() {
            let c = Call { lda: n + 2, incx: 2, incy: 3, beta: -1.0, ..Call::new(op, m, n) }.batched(3);
            each_triple(gpu, &mut rng, &c, false);
            // alpha = 0: y = beta·y with A and x all NaN, unread.
            for &beta in [0.0f32, -1.0].iter() {
                each_triple(gpu, &mut rng, &Call { alpha: 0.0, beta, ..c }, true);
            }
        }
    }
}

#[test]
fn bad_input_is_refused_before_any_launch() {
    let handle = match gpu("bad_input_is_refused_before_any_launch") {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let (m, n) = (8usize, 4usize);
    let a = upload(&[bf16::from_f32(1.0); 32]);
    let x = upload(&[bf16::from_f32(1.0); 64]);
    let y_host = vec![bf16::from_f32(7.0); 64];
    let y = upload(&y_host);
    let opts = SgemvOptions::default();
    let one = SgemvBatch::ONE;
    assert_eq!(
        gpu.gemv(m, n, &a, &x.index(..5), &mut y.index(..m), one, opts),
        Err(Error::LengthMismatch { what: "x", expected: 4, actual: 5 })
    );
    let zero_inc = SgemvOptions { incy: 0, ..opts };
    assert_eq!(
        gpu.gemv(m, n, &a, &x.index(..4), &mut y.index(..m), one, zero_inc),
        Err(Error::Stride { what: "incy", value: 0 })
    );
    let named = SgemvOptions { kernel: SgemvKernel::BatchedN, ..opts };
    assert!(matches!(gpu.gemv(m, n, &a, &x.index(..4), &mut y.index(..m), one, named), Err(Error::Unsupported { .. })));
    // Two problems' y 7 apart with 8 entries each interleave.
    let ys = SgemvBatch { count: 2, stride_a: 0, stride_x: 0, stride_y: 7 };
    assert_eq!(
        gpu.gemv(m, n, &a, &x.index(..4), &mut y.index(..15), ys, opts),
        Err(Error::Overlap { what: "y", with: "y" })
    );
    // y's 2-byte elements against x's: y starting on x's last element overlaps, one past does not.
    let mut on_x = x.index(3..3 + m);
    assert_eq!(gpu.gemv(m, n, &a, &x.index(..4), &mut on_x, one, opts), Err(Error::Overlap { what: "y", with: "x" }));
    assert_eq!(download(gpu, &x), vec![bf16::from_f32(1.0); 64], "no refused call wrote x");
    let mut past_x = x.index(4..4 + m);
    assert_eq!(gpu.gemv(m, n, &a, &x.index(..4), &mut past_x, one, opts), Ok(()));
    let got = download(gpu, &x);
    assert_eq!(&got[4..4 + m], &vec![bf16::from_f32(4.0); m][..], "each row of ones times four ones");
    assert_eq!(download(gpu, &y), y_host, "no refused call wrote y");
}
