//! What an sgemv call passes, checked: lengths, `lda`, and the shape dispatch looks at.
use super::layout::SgemvLayout;
use crate::error::{Error, Result};
use crate::launch::div_ceil;
use cust::memory::{DeviceCopy, DeviceSlice};
use kernels::config::{VECTOR_BYTES, WARP_SIZE};
use kernels::sgemv::Op;

/// A device buffer as the checks see it: its address and its length in elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawSlice {
    pub addr: u64,
    pub len: usize,
}

impl RawSlice {
    pub fn of<T: DeviceCopy>(s: &DeviceSlice<T>) -> RawSlice {
        RawSlice { addr: s.as_device_ptr().as_raw(), len: s.len() }
    }

    /// Whether the first `len` f32s from this address and the first `other_len` from `other`'s
    /// share a byte; empty ranges share none.
    #[cfg(test)]
    pub fn overlaps(&self, len: usize, other: &RawSlice, other_len: usize) -> bool {
        self.overlaps_sized((len, 4), other, (other_len, 4))
    }

    /// Whether the ranges share a byte, for elements of any size: `(elements, bytes each)` of each.
    pub fn overlaps_sized(
        &self,
        (len, size): (usize, usize),
        other: &RawSlice,
        (other_len, other_size): (usize, usize),
    ) -> bool {
        let bytes = |addr: u64, len: usize, size: usize| (addr as u128, addr as u128 + size as u128 * len as u128);
        let (start, end) = bytes(self.addr, len, size);
        let (other_start, other_end) = bytes(other.addr, other_len, other_size);
        start < end && other_start < other_end && start < other_end && other_start < end
    }
}

/// An sgemv call as passed: `y = alpha · op(A) x + beta · y`, A row-major m×n with row stride
/// `lda`; x has n entries for `Op::N` (m for `Op::T`), y the other count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SgemvCall {
    pub op: Op,
    pub m: usize,
    pub n: usize,
    pub lda: usize,
    pub a: RawSlice,
    pub x: RawSlice,
    pub y: RawSlice,
}

impl SgemvCall {
    /// Checks lengths, `lda` and that y shares no memory with A or x; returns the shape. Errors:
    /// `LeadingDimension` (lda < n), `LengthMismatch` (A shorter than (m-1)·lda+n; x or y not n
    /// and m as `op` says), `TooLarge` ((m-1)·lda+n past usize), `Overlap` (y's `out_len` floats
    /// share a byte with the (m-1)·lda+n floats of A the call spans or with x's).
    pub fn validate(&self) -> Result<SgemvShape> {
        self.validate_in(&SgemvLayout::SINGLE)
    }

    /// [`SgemvCall::validate`] for the problems of `layout`: A, x and y must hold what the
    /// batch spans (x and y exactly that in the single layout, at least that otherwise), and
    /// y's span must share no byte with A's or x's spans. Also `Stride` (an increment of 0)
    /// and `Overlap { what: "y", with: "y" }` (problems' y interleave), from
    /// [`SgemvLayout::check`].
    pub fn validate_in(&self, layout: &SgemvLayout) -> Result<SgemvShape> {
        self.validate_sized(layout, [4; 3])
    }

    /// [`SgemvCall::validate_in`] for elements of A, x and y of `bytes` each (the overlap checks
    /// compare byte ranges).
    pub fn validate_sized(&self, layout: &SgemvLayout, bytes: [usize; 3]) -> Result<SgemvShape> {
        let (m, n, lda) = (self.m, self.n, self.lda);
        let (x_len, out_len) = if self.op == Op::N { (n, m) } else { (m, n) };
        if lda < n {
            return Err(Error::LeadingDimension { lda, n });
        }
        layout.check(out_len)?;
        let too_large = |what| Error::TooLarge { what, len: usize::MAX, max: usize::MAX };
        // (m - 1)·lda + n, which only an absurd shape overflows (no slice is that long).
        let a_one = if m == 0 { Some(0) } else { (m - 1).checked_mul(lda).and_then(|e| e.checked_add(n)) };
        let a_one = a_one.ok_or(Error::TooLarge { what: "(m - 1) * lda + n", len: usize::MAX, max: self.a.len })?;
        let batch = layout.batch;
        let a_needed = layout.batch_span(a_one, batch.stride_a).ok_or_else(|| too_large("A's batch span"))?;
        let x_one = layout.x_span(x_len).ok_or_else(|| too_large("x span"))?;
        let x_needed = layout.batch_span(x_one, batch.stride_x).ok_or_else(|| too_large("x's batch span"))?;
        let y_one = layout.y_span(out_len).ok_or_else(|| too_large("y span"))?;
        let y_needed = layout.batch_span(y_one, batch.stride_y).ok_or_else(|| too_large("y's batch span"))?;
        if self.a.len < a_needed {
            return Err(Error::LengthMismatch { what: "A", expected: a_needed, actual: self.a.len });
        }
        let exact = layout.is_single();
        for &(what, len, needed) in [("x", self.x.len, x_needed), ("y", self.y.len, y_needed)].iter() {
            if len < needed || (exact && len != needed) {
                return Err(Error::LengthMismatch { what, expected: needed, actual: len });
            }
        }
        // `DeviceSlice` is `Copy`, so `&mut y` proves nothing: y may be a view into A or x.
        let [a_bytes, x_bytes, y_bytes] = bytes;
        if self.y.overlaps_sized((y_needed, y_bytes), &self.a, (a_needed, a_bytes)) {
            return Err(Error::Overlap { what: "y", with: "A" });
        }
        if self.y.overlaps_sized((y_needed, y_bytes), &self.x, (x_needed, x_bytes)) {
            return Err(Error::Overlap { what: "y", with: "x" });
        }
        Ok(SgemvShape { op: self.op, m, n, lda, a_addr: self.a.addr, x_addr: self.x.addr })
    }
}

/// The shape and addresses of one checked sgemv call: what dispatch and planning look at.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SgemvShape {
    pub op: Op,
    pub m: usize,
    pub n: usize,
    pub lda: usize,
    pub a_addr: u64,
    pub x_addr: u64,
}

impl SgemvShape {
    /// A and x 16-byte aligned and every row start too (lda % 4 == 0).
    pub fn vector_aligned(&self) -> bool {
        let a = VECTOR_BYTES as u64;
        self.a_addr % a == 0 && self.x_addr % a == 0 && self.lda % 4 == 0
    }

    /// A 16-byte aligned, lda and n multiples of 4: every row is whole float4s (x aside).
    pub fn rows_aligned(&self) -> bool {
        self.a_addr % VECTOR_BYTES as u64 == 0 && self.lda % 4 == 0 && self.n % 4 == 0
    }

    /// `TStripes`: columns its first tile starts before column 0, so that every stripe is one
    /// aligned 128-byte line; nonzero only when every row starts equally misaligned (lda a
    /// multiple of 32, A 4-byte aligned).
    pub fn stripes_shift(&self) -> usize {
        let line = WARP_SIZE as u64;
        if self.lda % line as usize == 0 && self.a_addr % 4 == 0 {
            ((self.a_addr / 4) % line) as usize
        } else {
            0
        }
    }

    /// `TStripes`: its 32-column tiles.
    pub fn stripes_tiles(&self) -> usize {
        div_ceil(self.n + self.stripes_shift(), WARP_SIZE as usize)
    }

    /// Entries of y: m for `Op::N`, n for `Op::T`.
    pub fn out_len(&self) -> usize {
        match self.op {
            Op::N => self.m,
            Op::T => self.n,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    /// Where the tests' y lies: past every A and x they make.
    const Y_ADDR: u64 = 1 << 60;

    /// A call of these lengths, y of `y` floats at `Y_ADDR`.
    fn validate(
        op: Op,
        m: usize,
        n: usize,
        lda: usize,
        a: (u64, usize),
        x: (u64, usize),
        y: usize,
    ) -> Result<SgemvShape> {
        let raw = |(addr, len)| RawSlice { addr, len };
        SgemvCall { op, m, n, lda, a: raw(a), x: raw(x), y: RawSlice { addr: Y_ADDR, len: y } }.validate()
    }

    /// `Op::N`, 4 × 8 (lda 10): A spans 38 floats from 0x1000 (to 0x1098), x 8 floats from
    /// 0x2000 (to 0x2020); y's 4 floats from `y_addr`.
    fn y_at(y_addr: u64) -> Result<SgemvShape> {
        let raw = |addr, len| RawSlice { addr, len };
        SgemvCall { op: Op::N, m: 4, n: 8, lda: 10, a: raw(0x1000, 40), x: raw(0x2000, 8), y: raw(y_addr, 4) }
            .validate()
    }

    #[test]
    fn y_sharing_memory_with_a_or_x_is_refused() {
        let y_on_a = Err(Error::Overlap { what: "y", with: "A" });
        let y_on_x = Err(Error::Overlap { what: "y", with: "x" });
        // y's 16 bytes at A's start, inside it, at its end, across its last float, across its
        // first; then the same about x.
        for &addr in [0x1000u64, 0x1040, 0x1088, 0x1094, 0x0ff4].iter() {
            assert_eq!(y_at(addr), y_on_a, "y at {:#x}", addr);
        }
        for &addr in [0x2000u64, 0x2010, 0x201c, 0x1ff4].iter() {
            assert_eq!(y_at(addr), y_on_x, "y at {:#x}", addr);
        }
        // Unaligned addresses compare by bytes: one shared byte is an overlap.
        assert_eq!(y_at(0x1ff1), y_on_x);
        assert_eq!(y_at(0x2001), y_on_x);
        // Adjacent ranges share no byte: y ending where A starts or starting where it ends (A's
        // unread tail, past (m-1)·lda+n floats, is not A's), and the same about x.
        for &addr in [0x0ff0u64, 0x1098, 0x109c, 0x1ff0, 0x2020].iter() {
            assert!(y_at(addr).is_ok(), "y at {:#x}", addr);
        }
        // x may share memory with A: both are only read.
        let raw = |addr, len| RawSlice { addr, len };
        let x_in_a = SgemvCall { op: Op::N, m: 4, n: 8, lda: 10, a: raw(0x1000, 40), x: raw(0x1000, 8), y: raw(0, 4) };
        assert!(x_in_a.validate().is_ok());
        // Op::T: y has n floats, x m.
        let t = SgemvCall { op: Op::T, m: 4, n: 8, lda: 10, a: raw(0x1000, 38), x: raw(0x2000, 4), y: raw(0x1ff0, 8) };
        assert_eq!(t.validate(), y_on_x, "y holds all of x");
        assert_eq!(SgemvCall { y: raw(0x1094, 8), ..t }.validate(), y_on_a);
        assert!(SgemvCall { y: raw(0x1fe0, 8), ..t }.validate().is_ok());
    }

    #[test]
    fn empty_ranges_never_overlap() {
        let raw = |addr, len| RawSlice { addr, len };
        let a = raw(0x1000, 64);
        assert!(!raw(0x1000, 0).overlaps(0, &a, 64) && !a.overlaps(64, &raw(0x1010, 0), 0));
        assert!(!raw(0x1000, 4).overlaps(4, &a, 0), "an empty A (m = 0) spans nothing");
        // m = 0 (Op::N): y is empty wherever it lies; m = 0 (Op::T): A spans nothing, x is empty.
        let n_empty =
            SgemvCall { op: Op::N, m: 0, n: 8, lda: 8, a: raw(0x1000, 0), x: raw(0x2000, 8), y: raw(0x2000, 0) };
        assert!(n_empty.validate().is_ok());
        let t_empty =
            SgemvCall { op: Op::T, m: 0, n: 8, lda: 8, a: raw(0x1000, 0), x: raw(0x1000, 0), y: raw(0x1000, 8) };
        assert!(t_empty.validate().is_ok());
        // n = 0 (Op::N): x is empty, A spans (m-1)·lda floats.
        let n_zero =
            SgemvCall { op: Op::N, m: 4, n: 0, lda: 2, a: raw(0x1000, 6), x: raw(0x1010, 0), y: raw(0x1018, 4) };
        assert_eq!(n_zero.validate(), Ok(SgemvShape { op: Op::N, m: 4, n: 0, lda: 2, a_addr: 0x1000, x_addr: 0x1010 }));
        assert_eq!(SgemvCall { y: raw(0x1014, 4), ..n_zero }.validate(), Err(Error::Overlap { what: "y", with: "A" }));
        // Byte ranges past 64 bits do not wrap.
        assert!(raw(u64::MAX - 3, 1).overlaps(1, &raw(u64::MAX - 1, 1), 1));
        assert!(!raw(u64::MAX - 3, 1).overlaps(1, &raw(0, 1), 1));
    }

    #[test]
    fn sgemv_validation() {
        let a = (0x1000u64, 100 * 32);
        let x = (0x8000u64, 32);
        assert!(validate(Op::N, 100, 32, 32, a, x, 100).is_ok());
        assert_eq!(validate(Op::N, 100, 32, 31, a, x, 100), Err(Error::LeadingDimension { lda: 31, n: 32 }));
        assert_eq!(
            validate(Op::N, 100, 32, 40, a, x, 100),
            Err(Error::LengthMismatch { what: "A", expected: 99 * 40 + 32, actual: 3200 })
        );
        assert_eq!(
            validate(Op::N, 100, 32, 32, a, (0x8000, 31), 100),
            Err(Error::LengthMismatch { what: "x", expected: 32, actual: 31 })
        );
        assert_eq!(
            validate(Op::N, 100, 32, 32, a, x, 99),
            Err(Error::LengthMismatch { what: "y", expected: 100, actual: 99 })
        );
        assert!(validate(Op::N, 0, 32, 32, (0x1000, 0), x, 0).is_ok(), "m = 0 needs no A");
        assert!(validate(Op::N, 5, 0, 0, (0x1000, 0), (0x8000, 0), 5).is_ok(), "n = 0 is y = beta * y");
        // 64-bit shapes: m, lda and A past 2^32 elements are accepted.
        assert!(validate(Op::N, 1 << 33, 1, 1, (0, 1 << 33), (0, 1), 1 << 33).is_ok());
        let (m, lda) = ((1usize << 20) + 3, 4100);
        assert!(validate(Op::N, m, 4100, lda, (0, m * lda), (0, 4100), m).is_ok());
        assert_eq!(
            validate(Op::N, m, 4100, lda, (0, m * lda - 1), (0, 4100), m),
            Err(Error::LengthMismatch { what: "A", expected: m * lda, actual: m * lda - 1 })
        );
        // An extent past 64 bits is refused, not wrapped.
        assert!(matches!(validate(Op::N, 1 << 40, 1, 1 << 40, (0, 1), (0, 1), 1 << 40), Err(Error::TooLarge { .. })));
    }

    #[test]
    fn sgemv_op_validation() {
        let (a, x_m, x_n) = ((0x1000u64, 100 * 32), (0x8000u64, 100), (0x8000u64, 32));
        assert!(validate(Op::T, 100, 32, 32, a, x_m, 32).is_ok());
        assert_eq!(
            validate(Op::T, 100, 32, 32, a, x_n, 32),
            Err(Error::LengthMismatch { what: "x", expected: 100, actual: 32 })
        );
        assert_eq!(
            validate(Op::T, 100, 32, 32, a, x_m, 100),
            Err(Error::LengthMismatch { what: "y", expected: 32, actual: 100 })
        );
        assert_eq!(validate(Op::T, 100, 32, 31, a, x_m, 32), Err(Error::LeadingDimension { lda: 31, n: 32 }));
        assert!(validate(Op::T, 0, 7, 7, (0x1000, 0), (0x8000, 0), 7).is_ok(), "m = 0 is y = beta * y");
        assert_eq!(validate(Op::T, 0, 7, 7, (0x1000, 0), (0x8000, 0), 7).unwrap().out_len(), 7);
    }

    #[test]
    fn strided_and_batched_calls_need_what_their_problems_span() {
        use crate::sgemv::layout::{SgemvBatch, SgemvLayout};
        let raw = |addr, len| RawSlice { addr, len };
        let layout = |incx, incy, count, stride_a, stride_x, stride_y| SgemvLayout {
            incx,
            incy,
            batch: SgemvBatch { count, stride_a, stride_x, stride_y },
        };
        // Op::N 4 × 8 (lda 10): A spans 38, x 1 + 7·3 = 22, y 1 + 3·2 = 7 per problem.
        let call = |a, x, y| SgemvCall {
            op: Op::N,
            m: 4,
            n: 8,
            lda: 10,
            a: raw(0x1000, a),
            x: raw(0x10000, x),
            y: raw(0x20000, y),
        };
        let strided = layout(3, 2, 1, 0, 0, 0);
        assert!(call(38, 22, 7).validate_in(&strided).is_ok());
        assert!(call(38, 30, 9).validate_in(&strided).is_ok(), "longer buffers are fine");
        assert_eq!(
            call(38, 21, 7).validate_in(&strided),
            Err(Error::LengthMismatch { what: "x", expected: 22, actual: 21 })
        );
        assert_eq!(
            call(38, 22, 6).validate_in(&strided),
            Err(Error::LengthMismatch { what: "y", expected: 7, actual: 6 })
        );
        assert_eq!(
            call(38, 22, 7).validate_in(&layout(0, 1, 1, 0, 0, 0)),
            Err(Error::Stride { what: "incx", value: 0 })
        );
        // Three problems 41, 23 and 9 apart (not multiples of 4): 2·41 + 38, 2·23 + 22, 2·9 + 7.
        let batch = layout(3, 2, 3, 41, 23, 9);
        assert!(call(120, 68, 25).validate_in(&batch).is_ok());
        assert_eq!(
            call(119, 68, 25).validate_in(&batch),
            Err(Error::LengthMismatch { what: "A", expected: 120, actual: 119 })
        );
        assert_eq!(
            call(120, 67, 25).validate_in(&batch),
            Err(Error::LengthMismatch { what: "x", expected: 68, actual: 67 })
        );
        assert_eq!(
            call(120, 68, 24).validate_in(&batch),
            Err(Error::LengthMismatch { what: "y", expected: 25, actual: 24 })
        );
        // ys 6 apart interleave with spans of 7; A and x may be shared (stride 0).
        assert_eq!(
            call(120, 68, 25).validate_in(&layout(3, 2, 3, 41, 23, 6)),
            Err(Error::Overlap { what: "y", with: "y" })
        );
        assert!(call(38, 22, 25).validate_in(&layout(3, 2, 3, 0, 0, 9)).is_ok());
        // y's whole span against A's and x's.
        let y_in_x = SgemvCall { y: raw(0x10000 + 4 * 60, 25), ..call(120, 68, 25) };
        assert_eq!(y_in_x.validate_in(&batch), Err(Error::Overlap { what: "y", with: "x" }));
        // An empty batch needs nothing.
        assert!(call(0, 0, 0).validate_in(&layout(3, 2, 0, 41, 23, 9)).is_ok());
        // Op::T: x has m entries, y n.
        let t = SgemvCall { op: Op::T, ..call(38, 1 + 3 * 3, 1 + 7 * 2) };
        assert!(t.validate_in(&strided).is_ok());
    }

    #[test]
    fn stripes_shift_tiles_onto_aligned_lines() {
        // Stripes shift their tiles to aligned lines when every row starts equally misaligned.
        let t = |lda, a_addr| SgemvShape { op: Op::T, m: 64, n: 4096, lda, a_addr, x_addr: 0x2000 };
        assert_eq!((t(4096, 0x1004).stripes_shift(), t(4096, 0x1004).stripes_tiles()), (1, 129));
        assert_eq!((t(4096, 0x107c).stripes_shift(), t(4096, 0x1080).stripes_shift()), (31, 0));
        assert_eq!((t(4097, 0x1004).stripes_shift(), t(4097, 0x1004).stripes_tiles()), (0, 128));
        assert_eq!(t(4096, 0x1002).stripes_shift(), 0);
    }
}
