//! What a checked sgemv call enqueues, as BLAS defines it: nothing where y stays as it is,
//! `y = beta·y` without reading A or x where there is nothing to sum, else the product.
use super::shape::SgemvShape;
use crate::error::Result;
use kernels::sgemv::{Op, SgemvKernel};

/// What one sgemv call launches.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SgemvWork {
    /// Nothing: y is empty, or stays as it is (beta = 1 with nothing to sum).
    Nothing,
    /// `kernel` (`Auto`: the device's pick for `shape`) on `shape`, with `alpha`.
    Launch { kernel: SgemvKernel, shape: SgemvShape, alpha: f32 },
}

impl SgemvShape {
    /// Products each entry of y sums: n for `Op::N`, m for `Op::T`.
    pub fn inner_len(&self) -> usize {
        match self.op {
            Op::N => self.n,
            Op::T => self.m,
        }
    }

    /// This shape with nothing to sum (n = 0 for `Op::N`, m = 0 for `Op::T`), y as before. The
    /// kernels `Auto` picks for it (`RowsPerWarp(8)` for `Op::N`, the transposed ones for
    /// `Op::T`) load nothing from A or x and store `alpha·0 + beta·y`, not reading y when
    /// beta = 0.
    pub fn without_sum(&self) -> SgemvShape {
        match self.op {
            Op::N => SgemvShape { n: 0, ..*self },
            Op::T => SgemvShape { m: 0, ..*self },
        }
    }

    /// What a call of this shape enqueues with `alpha`, `beta` and `kernel`:
    /// - y empty: nothing, whatever the kernel;
    /// - a named kernel is checked against this shape ([`SgemvShape::check`]'s errors), so
    ///   alpha does not change what is refused;
    /// - nothing to sum (alpha = 0, or an empty inner dimension): A and x are not read, as in
    ///   BLAS; with beta = 1 nothing runs (y unchanged), else `Auto`'s kernel for
    ///   [`SgemvShape::without_sum`] with alpha 0 gives y = beta·y (y = 0 unread when beta = 0;
    ///   alpha 0 keeps an infinite or NaN alpha times the empty sum out of y);
    /// - else `kernel` on this shape with `alpha`.
    pub fn work(&self, alpha: f32, beta: f32, kernel: SgemvKernel) -> Result<SgemvWork> {
        if self.out_len() == 0 {
            return Ok(SgemvWork::Nothing);
        }
        if kernel != SgemvKernel::Auto {
            self.check(kernel)?;
        }
        if alpha != 0.0 && self.inner_len() > 0 {
            return Ok(SgemvWork::Launch { kernel, shape: *self, alpha });
        }
        if beta == 1.0 {
            return Ok(SgemvWork::Nothing);
        }
        Ok(SgemvWork::Launch { kernel: SgemvKernel::Auto, shape: self.without_sum(), alpha: 0.0 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    fn shape(op: Op, m: usize, n: usize) -> SgemvShape {
        SgemvShape { op, m, n, lda: n, a_addr: 0x1000, x_addr: 0x2000 }
    }

    fn scale_y(shape: SgemvShape) -> SgemvWork {
        SgemvWork::Launch { kernel: SgemvKernel::Auto, shape, alpha: 0.0 }
    }

    #[test]
    fn alpha_zero_scales_y_without_the_product() {
        for &(op, m, n) in [(Op::N, 100, 32), (Op::N, 3, 5000), (Op::T, 100, 32), (Op::T, 7, 1 << 19)].iter() {
            let s = shape(op, m, n);
            let empty = if op == Op::N { shape(op, m, 0) } else { shape(op, 0, n) };
            assert_eq!(s.without_sum(), SgemvShape { lda: n, ..empty });
            for &alpha in [0.0f32, -0.0].iter() {
                for &beta in [0.0f32, 2.5, -1.0, f32::NAN].iter() {
                    let what = format!("{:?} {} x {} alpha {} beta {}", op, m, n, alpha, beta);
                    assert_eq!(s.work(alpha, beta, SgemvKernel::Auto), Ok(scale_y(s.without_sum())), "{}", what);
                }
                assert_eq!(s.work(alpha, 1.0, SgemvKernel::Auto), Ok(SgemvWork::Nothing), "BLAS's quick return");
            }
            assert_eq!(
                s.work(1.5, 0.0, SgemvKernel::Auto),
                Ok(SgemvWork::Launch { kernel: SgemvKernel::Auto, shape: s, alpha: 1.5 })
            );
        }
    }

    #[test]
    fn named_kernels_are_checked_then_replaced_when_nothing_is_summed() {
        let s = shape(Op::N, 100, 32);
        // A kernel that takes the shape runs it, or gives way to Auto's for the empty sum.
        let named = SgemvKernel::N32;
        assert_eq!(s.work(2.0, 0.0, named), Ok(SgemvWork::Launch { kernel: named, shape: s, alpha: 2.0 }));
        assert_eq!(s.work(0.0, 0.5, named), Ok(scale_y(s.without_sum())));
        assert_eq!(s.work(0.0, 1.0, named), Ok(SgemvWork::Nothing));
        // One that does not is refused whatever alpha is.
        for &alpha in [1.0f32, 0.0].iter() {
            for &beta in [0.0f32, 1.0].iter() {
                assert!(matches!(s.work(alpha, beta, SgemvKernel::TVec4), Err(Error::Unsupported { .. })));
                assert!(matches!(s.work(alpha, beta, SgemvKernel::RowsPerWarp(3)), Err(Error::Unsupported { .. })));
            }
        }
        let unaligned = SgemvShape { a_addr: 0x1004, ..s };
        assert!(matches!(
            unaligned.work(0.0, 0.0, SgemvKernel::Vec4Rows(32)),
            Err(Error::Misaligned { what: "A", .. })
        ));
        // An empty y runs nothing, as before any check.
        assert_eq!(shape(Op::N, 0, 32).work(0.0, 0.0, SgemvKernel::TVec4), Ok(SgemvWork::Nothing));
        assert_eq!(shape(Op::T, 32, 0).work(1.0, 0.0, SgemvKernel::N32), Ok(SgemvWork::Nothing));
    }

    #[test]
    fn an_empty_sum_is_beta_y_whatever_alpha() {
        // n = 0 (Op::N), m = 0 (Op::T): y = beta·y, an infinite or NaN alpha not multiplied in.
        for &s in [shape(Op::N, 37, 0), shape(Op::T, 0, 37)].iter() {
            let named = if s.op == Op::N { SgemvKernel::StagedRows } else { SgemvKernel::TScalar };
            for &alpha in [1.0f32, f32::INFINITY, f32::NAN].iter() {
                assert_eq!(s.work(alpha, 2.0, SgemvKernel::Auto), Ok(scale_y(s)));
                assert_eq!(s.work(alpha, 2.0, named), Ok(scale_y(s)), "{:?} gives way", named);
                assert_eq!(s.work(alpha, 1.0, SgemvKernel::Auto), Ok(SgemvWork::Nothing));
            }
        }
    }

    #[test]
    fn auto_for_an_empty_sum_is_a_kernel_that_loads_nothing_then() {
        // As kernels/src/sgemv reads: rows_per_warp loads A and x only for columns below n, the
        // transposed kernels only for rows below m.
        for n in (0..40).chain([127, 128, 129, 1000, 4096, 5000, 1 << 16, 1 << 20].iter().copied()) {
            for &(lda, a_addr, x_addr) in
                [(n, 0x1000u64, 0x2000u64), (n + 1, 0x1004, 0x2004), (n + 3, 0x1000, 0x2000)].iter()
            {
                let s = SgemvShape { op: Op::N, m: 100, n, lda, a_addr, x_addr };
                assert_eq!(s.without_sum().auto_kernel(), SgemvKernel::RowsPerWarp(8), "n {} lda {}", n, lda);
                let t = SgemvShape { op: Op::T, ..s }.without_sum();
                let k = t.auto_kernel();
                let transposed = matches!(
                    k,
                    SgemvKernel::TStreamVec4
                        | SgemvKernel::TStreamScalar
                        | SgemvKernel::TStripes(_)
                        | SgemvKernel::TVec4
                        | SgemvKernel::TScalar
                );
                assert!(transposed && t.check(k).is_ok(), "Op::T n {} lda {}: {:?}", n, lda, k);
            }
        }
    }
}
