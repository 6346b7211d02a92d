//! The call every sgemv kernel serves, as the kernels see it: raw pointers and 64-bit shapes,
//! and the one way they write y.

/// `y = alpha · op(A) · x + beta · y`, A row-major m×n with row stride `lda`.
#[derive(Clone, Copy)]
pub struct Gemv {
    pub a: *const f32,
    pub x: *const f32,
    pub m: usize,
    pub n: usize,
    pub lda: usize,
    pub alpha: f32,
    pub beta: f32,
    pub y: *mut f32,
}

impl Gemv {
    /// Writes `y[i] = alpha * dot + beta * y[i]`, not reading `y` when `beta == 0`.
    #[inline(always)]
    pub unsafe fn store(&self, i: usize, dot: f32) {
        let p = self.y.add(i);
        *p = if self.beta == 0.0 { self.alpha * dot } else { self.alpha * dot + self.beta * *p };
    }
}
