//! What an sgemv call passes, checked: lengths, `lda`, and the shape dispatch looks at.
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
    /// Checks lengths and `lda`; returns the shape. Errors: `LeadingDimension` (lda < n),
    /// `LengthMismatch` (A shorter than (m-1)·lda+n; x or y not n and m as `op` says),
    /// `TooLarge` ((m-1)·lda+n past usize).
    pub fn validate(&self) -> Result<SgemvShape> {
        let (m, n, lda) = (self.m, self.n, self.lda);
        let (x_len, out_len) = if self.op == Op::N { (n, m) } else { (m, n) };
        if lda < n {
            return Err(Error::LeadingDimension { lda, n });
        }
        // (m - 1)·lda + n, which only an absurd shape overflows (no slice is that long).
        let a_needed = if m == 0 { Some(0) } else { (m - 1).checked_mul(lda).and_then(|e| e.checked_add(n)) };
        let a_needed =
            a_needed.ok_or(Error::TooLarge { what: "(m - 1) * lda + n", len: usize::MAX, max: self.a.len })?;
        if self.a.len < a_needed {
            return Err(Error::LengthMismatch { what: "A", expected: a_needed, actual: self.a.len });
        }
        if self.x.len != x_len {
            return Err(Error::LengthMismatch { what: "x", expected: x_len, actual: self.x.len });
        }
        if self.y.len != out_len {
            return Err(Error::LengthMismatch { what: "y", expected: out_len, actual: self.y.len });
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

    /// A call of these lengths (y's address is of no concern to validation).
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
        SgemvCall { op, m, n, lda, a: raw(a), x: raw(x), y: RawSlice { addr: 0x9000, len: y } }.validate()
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
    fn stripes_shift_tiles_onto_aligned_lines() {
        // Stripes shift their tiles to aligned lines when every row starts equally misaligned.
        let t = |lda, a_addr| SgemvShape { op: Op::T, m: 64, n: 4096, lda, a_addr, x_addr: 0x2000 };
        assert_eq!((t(4096, 0x1004).stripes_shift(), t(4096, 0x1004).stripes_tiles()), (1, 129));
        assert_eq!((t(4096, 0x107c).stripes_shift(), t(4096, 0x1080).stripes_shift()), (31, 0));
        assert_eq!((t(4097, 0x1004).stripes_shift(), t(4097, 0x1004).stripes_tiles()), (0, 128));
        assert_eq!(t(4096, 0x1002).stripes_shift(), 0);
    }
}
