//! What the gemv layout tests share: one call's shape and layout, and the CPU reference over f32,
//! f16 and bf16 elements.
use cudakernels::cust::memory::DeviceCopy;
use cudakernels::{bf16, f16, Op, SgemvBatch, SgemvKernel, SgemvOptions};

/// What lies between the entries a call writes; it must be left as it is.
pub const SENTINEL: f32 = 12345.0;

/// An element type of the tests' buffers, from and to f32.
pub trait El: DeviceCopy + Copy + Default + std::fmt::Debug {
    fn of(v: f32) -> Self;
    fn f(self) -> f32;
}

impl El for f32 {
    fn of(v: f32) -> f32 {
        v
    }
    fn f(self) -> f32 {
        self
    }
}

impl El for f16 {
    fn of(v: f32) -> f16 {
        f16::from_f32(v)
    }
    fn f(self) -> f32 {
        self.to_f32()
    }
}

impl El for bf16 {
    fn of(v: f32) -> bf16 {
        bf16::from_f32(v)
    }
    fn f(self) -> f32 {
        self.to_f32()
    }
}

/// One call: op, m, n, lda, incx, incy and the batch; alpha and beta; the elements before A,
/// x and y in their buffers (unaligned views).
#[derive(Clone, Copy, Debug)]
pub struct Call {
    pub op: Op,
    pub m: usize,
    pub n: usize,
    pub lda: usize,
    pub incx: usize,
    pub incy: usize,
    pub batch: SgemvBatch,
    pub alpha: f32,
    pub beta: f32,
    pub offsets: (usize, usize, usize),
}

impl Call {
    /// One contiguous problem, alpha 1, beta 0, incx and incy as given.
    pub fn new(op: Op, m: usize, n: usize, incx: usize, incy: usize) -> Call {
        let batch = SgemvBatch::ONE;
        Call { op, m, n, lda: n, incx, incy, batch, alpha: 1.0, beta: 0.0, offsets: (0, 0, 0) }
    }

    /// Entries of x and y.
    pub fn lens(&self) -> (usize, usize) {
        if self.op == Op::N {
            (self.n, self.m)
        } else {
            (self.m, self.n)
        }
    }

    /// Elements A, x and y span for the whole batch.
    pub fn spans(&self) -> (usize, usize, usize) {
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

    /// `count` of this call's problems, strides past each span by `pads` (A, x, y).
    pub fn batched(self, count: usize, pads: (usize, usize, usize)) -> Call {
        let (a, x, y) = Call { batch: SgemvBatch::ONE, ..self }.spans();
        let batch = SgemvBatch { count, stride_a: a + pads.0, stride_x: x + pads.1, stride_y: y + pads.2 };
        Call { batch, ..self }
    }

    pub fn opts(&self, kernel: SgemvKernel) -> SgemvOptions {
        let (alpha, beta, lda, op, incx, incy) = (self.alpha, self.beta, Some(self.lda), self.op, self.incx, self.incy);
        SgemvOptions { alpha, beta, lda, op, incx, incy, kernel }
    }

    /// Where problem b's y entry i lies in y's buffer.
    pub fn y_at(&self, b: usize, i: usize) -> usize {
        self.offsets.2 + b * self.batch.stride_y + i * self.incy
    }

    /// y's initial buffer: the sentinel everywhere, the problems' entries from `entry` (NaN
    /// where beta = 0: it must not be read).
    pub fn initial_y<Y: El>(&self, mut entry: impl FnMut() -> f32) -> Vec<Y> {
        let mut y = vec![Y::of(SENTINEL); self.offsets.2 + self.spans().2];
        for b in 0..self.batch.count {
            for i in 0..self.lens().1 {
                y[self.y_at(b, i)] = Y::of(if self.beta == 0.0 { f32::NAN } else { entry() });
            }
        }
        y
    }

    /// The whole y buffer the call must leave, from A, x and y as uploaded (offsets included):
    /// the exact sum (small integers) rounded once to Y.
    pub fn reference<A: El, X: El, Y: El>(&self, a: &[A], x: &[X], y0: &[Y]) -> Vec<Y> {
        let (a, x) = (&a[self.offsets.0..], &x[self.offsets.1..]);
        let mut y = y0.to_vec();
        let (x_len, y_len) = self.lens();
        for b in 0..self.batch.count {
            for i in 0..y_len {
                let mut dot = 0.0f64;
                for k in 0..x_len {
                    let (row, col) = if self.op == Op::N { (i, k) } else { (k, i) };
                    let av = a[b * self.batch.stride_a + row * self.lda + col].f() as f64;
                    dot += av * x[b * self.batch.stride_x + k * self.incx].f() as f64;
                }
                let at = self.y_at(b, i);
                let summed = if self.alpha == 0.0 || x_len == 0 { 0.0 } else { self.alpha as f64 * dot };
                let value = if self.beta == 0.0 { summed } else { summed + self.beta as f64 * y0[at].f() as f64 };
                y[at] = Y::of(value as f32);
            }
        }
        y
    }
}

/// Edge shapes (m, n) of the batched and half-precision gemv tests: empty either way, one
/// element, a warp, past a block, and a long thin row.
pub const EDGE_SHAPES: [(usize, usize); 6] = [(0, 5), (5, 0), (1, 1), (32, 32), (255, 257), (4, 5000)];

/// Whether `got` and `want` hold the same values, NaN matching NaN.
pub fn same<Y: El>(got: Y, want: Y) -> bool {
    got.f() == want.f() || (got.f().is_nan() && want.f().is_nan())
}
