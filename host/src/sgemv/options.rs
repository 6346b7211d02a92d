//! What a gemv call asks for besides its buffers and shape.
use kernels::sgemv::{Op, SgemvKernel};

/// Options of [`crate::GpuStream::sgemv`] (and `sgemv_batched`, `gemv`); the defaults are cuBLAS's: alpha 1, beta 0, lda = n, `Auto`,
/// `Op::N`, incx = incy = 1.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SgemvOptions {
    pub alpha: f32,
    pub beta: f32,
    /// Leading dimension (elements between row starts); `None` means n.
    pub lda: Option<usize>,
    pub kernel: SgemvKernel,
    pub op: Op,
    /// Elements between entries of x (BLAS's incx, at least 1).
    pub incx: usize,
    /// Elements between entries of y (BLAS's incy, at least 1).
    pub incy: usize,
}

impl Default for SgemvOptions {
    fn default() -> Self {
        SgemvOptions { alpha: 1.0, beta: 0.0, lda: None, kernel: SgemvKernel::Auto, op: Op::N, incx: 1, incy: 1 }
    }
}
