//! How the problems of one call lie in their buffers: BLAS's `incx`/`incy` and strided
//! batches (`cublasSgemvStridedBatched`'s strides), and which kernels take such a layout.
use crate::error::{Error, Result};
use kernels::sgemv::{Op, SgemvKernel};

/// `count` problems, problem b at `b·stride_a`, `b·stride_x`, `b·stride_y` elements into A, x
/// and y. A's and x's strides may be 0 (every problem reads the same); the problems' y must
/// not interleave (`stride_y` at least one problem's y span, see `SgemvLayout::check`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SgemvBatch {
    pub count: usize,
    pub stride_a: usize,
    pub stride_x: usize,
    pub stride_y: usize,
}

/// The scalar batched kernel of `op`: `Auto`'s kernel for any layout but the single one (where
/// no 16-byte kernel takes it), and the launch the scalar half-precision entries share.
pub fn batched_kernel(op: Op) -> SgemvKernel {
    if op == Op::N {
        SgemvKernel::BatchedN
    } else {
        SgemvKernel::BatchedT
    }
}

impl SgemvBatch {
    /// One problem.
    pub const ONE: SgemvBatch = SgemvBatch { count: 1, stride_a: 0, stride_x: 0, stride_y: 0 };
}

/// A call's layout: increments of x and y, and its batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SgemvLayout {
    pub incx: usize,
    pub incy: usize,
    pub batch: SgemvBatch,
}

/// Elements `len` entries `inc` apart span: 1 + (len − 1)·inc, 0 for none.
fn entries_span(len: usize, inc: usize) -> Option<usize> {
    if len == 0 {
        return Some(0);
    }
    (len - 1).checked_mul(inc)?.checked_add(1)
}

impl SgemvLayout {
    /// One contiguous problem: what [`crate::GpuStream::sgemv`]'s own kernels take.
    pub const SINGLE: SgemvLayout = SgemvLayout { incx: 1, incy: 1, batch: SgemvBatch::ONE };

    /// Whether this is [`SgemvLayout::SINGLE`] (any strides of a batch of one aside).
    pub fn is_single(&self) -> bool {
        self.incx == 1 && self.incy == 1 && self.batch.count == 1
    }

    /// Elements of a buffer the batch spans when one problem spans `one` elements and they lie
    /// `stride` apart; 0 when a problem spans none or the batch is empty.
    pub fn batch_span(&self, one: usize, stride: usize) -> Option<usize> {
        if one == 0 || self.batch.count == 0 {
            return Some(0);
        }
        (self.batch.count - 1).checked_mul(stride)?.checked_add(one)
    }

    /// Elements one problem's x of `len` entries spans.
    pub fn x_span(&self, len: usize) -> Option<usize> {
        entries_span(len, self.incx)
    }

    /// Elements one problem's y of `len` entries spans.
    pub fn y_span(&self, len: usize) -> Option<usize> {
        entries_span(len, self.incy)
    }

    /// Checks the increments (`Error::Stride` for 0) and that the problems' y, `out_len`
    /// entries each, do not interleave (`Error::Overlap { what: "y", with: "y" }`).
    pub fn check(&self, out_len: usize) -> Result<()> {
        if self.incx == 0 {
            return Err(Error::Stride { what: "incx", value: 0 });
        }
        if self.incy == 0 {
            return Err(Error::Stride { what: "incy", value: 0 });
        }
        let y_span = self.y_span(out_len).ok_or(Error::TooLarge { what: "y span", len: usize::MAX, max: 0 })?;
        if self.batch.count > 1 && y_span > 0 && self.batch.stride_y < y_span {
            return Err(Error::Overlap { what: "y", with: "y" });
        }
        Ok(())
    }

    /// The kernel that runs `kernel` (`Auto` or named) in this layout: any kernel for the
    /// single layout; otherwise `Auto` is the batched kernel of `op`, a batched kernel is
    /// itself, and the others (one contiguous problem each) are `Unsupported`.
    pub fn kernel_for(&self, kernel: SgemvKernel, op: Op) -> Result<SgemvKernel> {
        let batched = |k: SgemvKernel| k.entry().map_or(false, |e| e.launch.batched());
        match kernel {
            _ if self.is_single() => Ok(kernel),
            SgemvKernel::Auto => Ok(batched_kernel(op)),
            k if batched(k) => Ok(k),
            k => Err(Error::Unsupported {
                what: format!("{:?} takes one problem with incx = incy = 1 (BatchedN/BatchedT take any layout)", k),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(incx: usize, incy: usize, count: usize, stride_y: usize) -> SgemvLayout {
        SgemvLayout { incx, incy, batch: SgemvBatch { count, stride_a: 0, stride_x: 0, stride_y } }
    }

    #[test]
    fn spans_count_the_elements_between_first_and_last_entry() {
        let l = layout(3, 2, 5, 100);
        assert_eq!((l.x_span(4), l.y_span(4), l.x_span(0), l.x_span(1)), (Some(10), Some(7), Some(0), Some(1)));
        assert_eq!(l.batch_span(7, 100), Some(407));
        assert_eq!(l.batch_span(0, 100), Some(0));
        assert_eq!(layout(1, 1, 0, 0).batch_span(7, 100), Some(0), "an empty batch spans nothing");
        assert_eq!(layout(2, 1, 1, 0).x_span(usize::MAX), None, "past usize is None, not wrapped");
    }

    #[test]
    fn zero_increments_and_interleaved_ys_are_refused() {
        assert_eq!(layout(0, 1, 1, 0).check(4), Err(Error::Stride { what: "incx", value: 0 }));
        assert_eq!(layout(1, 0, 1, 0).check(4), Err(Error::Stride { what: "incy", value: 0 }));
        let y_on_y = Err(Error::Overlap { what: "y", with: "y" });
        // 4 entries of y, 2 apart, span 7 elements: the next problem starts 7 on at the earliest.
        assert_eq!(layout(1, 2, 2, 6).check(4), y_on_y);
        assert_eq!(layout(1, 2, 2, 0).check(4), y_on_y);
        assert_eq!(layout(1, 2, 2, 7).check(4), Ok(()));
        assert_eq!(layout(1, 1, 1000, 5).check(5), Ok(()));
        assert_eq!(layout(1, 1, 1, 0).check(4), Ok(()), "one problem has no other");
        assert_eq!(layout(1, 1, 3, 0).check(0), Ok(()), "empty ys share nothing");
    }

    #[test]
    fn other_layouts_take_the_batched_kernels() {
        for &op in [Op::N, Op::T].iter() {
            let own = if op == Op::N { SgemvKernel::BatchedN } else { SgemvKernel::BatchedT };
            assert_eq!(SgemvLayout::SINGLE.kernel_for(SgemvKernel::Auto, op), Ok(SgemvKernel::Auto));
            assert_eq!(SgemvLayout::SINGLE.kernel_for(SgemvKernel::N32, op), Ok(SgemvKernel::N32));
            for l in [layout(2, 1, 1, 0), layout(1, 3, 1, 0), layout(1, 1, 2, 64)].iter() {
                assert_eq!(l.kernel_for(SgemvKernel::Auto, op), Ok(own));
                assert_eq!(l.kernel_for(own, op), Ok(own));
                assert!(matches!(l.kernel_for(SgemvKernel::TStripes(8), op), Err(Error::Unsupported { .. })));
            }
        }
    }
}
