//! Which kernel takes a shape: `Auto`'s dispatch table, and whether a named kernel can.
use super::shape::SgemvShape;
use crate::error::{Error, Result};
use kernels::config::{
    SGEMV_STAGED_MAX_GAP, SGEMV_STAGED_MAX_N, SGEMV_T_STREAM_N, SGEMV_T_STRIPES_MIN_N, SGEMV_T_VEC4_BAND,
    SGEMV_WIDE_MIN_M, SGEMV_WIDE_N, SGEMV_WIDE_ROWS_N, VECTOR_BYTES, WARP_SIZE,
};
use kernels::sgemv::{Op, SgemvKernel};

/// The depths `TStripes` is built for, shallowest first.
pub fn stripe_depths() -> impl Iterator<Item = u32> {
    SgemvKernel::explicit().filter_map(|k| if let SgemvKernel::TStripes(d) = k { Some(d) } else { None })
}

/// The depth of `TStripes` for `tiles` column tiles: the deepest whose resident blocks
/// (`slots[i]` for the i-th of [`stripe_depths`], one wave) hold every tile; None when none
/// does. Deeper keeps more rows in flight but fewer blocks resident.
pub fn stripes_depth(tiles: usize, slots: &[usize]) -> Option<u32> {
    stripe_depths().zip(slots).filter(|&(_, &s)| tiles <= s).map(|(d, _)| d).last()
}

/// The error for a kernel with no entry point (`Auto`, or an instance not built), naming the
/// instances of its kind that are built.
pub fn not_built(kernel: SgemvKernel) -> Error {
    let same = std::mem::discriminant(&kernel);
    let built: Vec<_> = SgemvKernel::explicit().filter(|k| std::mem::discriminant(k) == same).collect();
    Error::Unsupported { what: format!("{:?} is not built (built: {:?})", kernel, built) }
}

/// Whether `Op::T` below `SGEMV_T_STREAM_N` columns takes the striped kernels for n columns:
/// from `SGEMV_T_STRIPES_MIN_N` on, outside `SGEMV_T_VEC4_BAND`.
pub fn sgemv_t_striped(n: usize) -> bool {
    let (band, end) = SGEMV_T_VEC4_BAND;
    n >= SGEMV_T_STRIPES_MIN_N && !(band..end).contains(&n)
}

/// The narrowest `Vec4Rows(cols)` built with cols ≥ n.
fn vec4_rows_for(n: usize) -> Option<SgemvKernel> {
    SgemvKernel::explicit()
        .filter_map(|k| if let SgemvKernel::Vec4Rows(c) = k { Some(c) } else { None })
        .filter(|&c| n <= c as usize)
        .min()
        .map(SgemvKernel::Vec4Rows)
}

impl SgemvShape {
    /// The dispatch table of `Auto`, first match, before the device has its say (the depth of
    /// `TStripes`, see `stripes_depth`). `Op::T`: n ≥ `SGEMV_T_STREAM_N` streams (`TStreamVec4`
    /// when A's rows are float4 aligned: A 16-byte aligned, lda and n multiples of 4; else
    /// `TStreamScalar`), n ≥ `SGEMV_T_STRIPES_MIN_N` outside `SGEMV_T_VEC4_BAND` takes `TStripes`
    /// (deepest, `sgemv_t_striped`), other n `TVec4` or `TScalar` by the same test. `Op::N`, by n:
    ///
    /// | n | float4 (A, x aligned, lda % 4 == 0) | otherwise |
    /// |---|---|---|
    /// | ≤ 64, n % 4 == 0 | `Vec4Rows(c)`, smallest c ≥ n | (by n below) |
    /// | ≤ 128, n % 4 == 0 | `N128` | (by n below) |
    /// | 1 to `SGEMV_STAGED_MAX_N`, lda - n < `SGEMV_STAGED_MAX_GAP` | `StagedRows` | same |
    /// | ≤ 4, ≤ 8, ≤ 16 | `RowsPerWarp(8, 4, 2)` | same |
    /// | ≤ 32 | `N32` | same |
    /// | < `SGEMV_WIDE_N` | `WarpRowsVec4` | `WarpRowsScalar` |
    /// | < `SGEMV_WIDE_ROWS_N` | `SplitKVec4` | `SplitKShifted` |
    /// | ≥ `SGEMV_WIDE_ROWS_N`, m ≥ `SGEMV_WIDE_MIN_M` | `WideVec4` | `SplitKShifted` |
    pub fn auto_kernel(&self) -> SgemvKernel {
        let n = self.n;
        let vec = self.vector_aligned();
        if self.op == Op::T {
            let deepest = stripe_depths().last().expect("TStripes is built");
            return match (n >= SGEMV_T_STREAM_N, self.rows_aligned()) {
                (true, true) => SgemvKernel::TStreamVec4,
                (true, false) => SgemvKernel::TStreamScalar,
                _ if sgemv_t_striped(n) => SgemvKernel::TStripes(deepest),
                (false, true) => SgemvKernel::TVec4,
                (false, false) => SgemvKernel::TScalar,
            };
        }
        let float4_rows = n > 0 && n % 4 == 0 && vec;
        // Rows that overlap (lda < n, which validation refuses) are not staged.
        let narrow_gap = self.lda.checked_sub(n).map_or(false, |gap| gap < SGEMV_STAGED_MAX_GAP);
        match n {
            _ if float4_rows && n <= 64 => vec4_rows_for(n).expect("Vec4Rows(64) is built"),
            _ if float4_rows && n <= 128 => SgemvKernel::N128,
            1..=SGEMV_STAGED_MAX_N if narrow_gap => SgemvKernel::StagedRows,
            0..=4 => SgemvKernel::RowsPerWarp(8),
            5..=8 => SgemvKernel::RowsPerWarp(4),
            9..=16 => SgemvKernel::RowsPerWarp(2),
            17..=32 => SgemvKernel::N32,
            _ if float4_rows && n >= SGEMV_WIDE_ROWS_N && self.m >= SGEMV_WIDE_MIN_M => SgemvKernel::WideVec4,
            _ if n >= SGEMV_WIDE_N && vec => SgemvKernel::SplitKVec4,
            _ if n >= SGEMV_WIDE_N => SgemvKernel::SplitKShifted,
            _ if vec => SgemvKernel::WarpRowsVec4,
            _ => SgemvKernel::WarpRowsScalar,
        }
    }

    /// Checks that `kernel` (not `Auto`) is built and handles this shape: its op, its width
    /// limits, and for float4 loads the alignment of A, x and lda.
    pub fn check(&self, kernel: SgemvKernel) -> Result<()> {
        let unsupported = |what: String| Err(Error::Unsupported { what });
        if kernel.entry().is_none() {
            return Err(not_built(kernel));
        }
        if kernel.op() != self.op {
            return unsupported(format!("{:?} computes Op::{:?}, not Op::{:?}", kernel, kernel.op(), self.op));
        }
        if let Some(limit) = self.width_limit(kernel) {
            return unsupported(format!("{:?} with n = {} (needs {})", kernel, self.n, limit));
        }
        if kernel.vector_loads() {
            let required = VECTOR_BYTES;
            if self.a_addr % required as u64 != 0 {
                return Err(Error::Misaligned { what: "A", required, address: self.a_addr });
            }
            if self.op == Op::N && self.x_addr % required as u64 != 0 {
                return Err(Error::Misaligned { what: "x", required, address: self.x_addr });
            }
            if self.lda % 4 != 0 {
                return unsupported(format!("{:?} with lda = {} (needs lda % 4 == 0)", kernel, self.lda));
            }
        }
        Ok(())
    }

    /// What `kernel` needs of n that this shape lacks, if anything.
    fn width_limit(&self, kernel: SgemvKernel) -> Option<String> {
        // (widest n, n a multiple of 4)
        let (max, quads) = match kernel {
            SgemvKernel::TVec4 | SgemvKernel::TStreamVec4 | SgemvKernel::WideVec4 => (None, true),
            SgemvKernel::N32 => (Some(WARP_SIZE as usize), false),
            SgemvKernel::StagedRows => (Some(SGEMV_STAGED_MAX_N), false),
            SgemvKernel::N128 => (Some(128), true),
            SgemvKernel::RowsPerWarp(r) => (Some((WARP_SIZE / r) as usize), false),
            SgemvKernel::Vec4Rows(c) => (Some(c as usize), true),
            _ => return None,
        };
        if max.map_or(false, |max| self.n > max) || (quads && self.n % 4 != 0) {
            let quads = if quads { "n % 4 == 0" } else { "" };
            return Some(match max {
                Some(max) => format!("n ≤ {}{}{}", max, if quads.is_empty() { "" } else { ", " }, quads),
                None => quads.to_string(),
            });
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels::config::WARP_SIZE;

    fn shape(m: usize, n: usize, lda: usize, a_addr: u64, x_addr: u64) -> SgemvShape {
        SgemvShape { op: Op::N, m, n, lda, a_addr, x_addr }
    }

    fn op_shape(op: Op, m: usize, n: usize, lda: usize, a_addr: u64) -> SgemvShape {
        SgemvShape { op, m, n, lda, a_addr, x_addr: 0x2000 }
    }

    fn check(kernel: SgemvKernel, shape: &SgemvShape) -> Result<()> {
        shape.check(kernel)
    }

    #[test]
    fn sgemv_kernel_requirements() {
        let aligned = shape(10, 128, 128, 0x1000, 0x2000);
        assert!(check(SgemvKernel::N128, &aligned).is_ok());
        assert!(matches!(
            check(SgemvKernel::N128, &shape(10, 128, 128, 0x1004, 0x2000)),
            Err(Error::Misaligned { what: "A", .. })
        ));
        assert!(matches!(
            check(SgemvKernel::WarpVec4, &shape(10, 128, 128, 0x1000, 0x2008)),
            Err(Error::Misaligned { what: "x", .. })
        ));
        assert!(matches!(
            check(SgemvKernel::WarpVec4, &shape(10, 128, 130, 0x1000, 0x2000)),
            Err(Error::Unsupported { .. })
        ));
        assert!(matches!(
            check(SgemvKernel::N128, &shape(10, 132, 132, 0x1000, 0x2000)),
            Err(Error::Unsupported { .. })
        ));
        assert!(matches!(check(SgemvKernel::N32, &shape(10, 33, 33, 0, 0)), Err(Error::Unsupported { .. })));
        assert!(matches!(check(SgemvKernel::RowsPerWarp(3), &shape(10, 4, 4, 0, 0)), Err(Error::Unsupported { .. })));
        assert!(matches!(check(SgemvKernel::RowsPerWarp(2), &shape(10, 17, 17, 0, 0)), Err(Error::Unsupported { .. })));
        for r in [2, 4, 8] {
            assert!(check(SgemvKernel::RowsPerWarp(r), &shape(10, (WARP_SIZE / r) as usize, 64, 0x1001, 0x3)).is_ok());
        }
        assert!(check(SgemvKernel::WarpScalar, &shape(10, 4096, 4099, 0x1001, 0x3)).is_ok());
        assert!(check(SgemvKernel::StagedRows, &shape(10, 32, 5000, 0x1001, 0x3)).is_ok());
        assert!(matches!(check(SgemvKernel::StagedRows, &shape(10, 129, 129, 0, 0)), Err(Error::Unsupported { .. })));
    }

    #[test]
    fn sgemv_dispatch() {
        // (m, n, lda, A address, x address) and the kernel Auto picks.
        let table = [
            ((16384, 16, 16, 0x1000, 0x2000), SgemvKernel::Vec4Rows(16)),
            ((16384, 12, 12, 0x1000, 0x2000), SgemvKernel::Vec4Rows(16)),
            ((16384, 32, 32, 0x1000, 0x2000), SgemvKernel::Vec4Rows(32)),
            ((16384, 64, 64, 0x1000, 0x2000), SgemvKernel::Vec4Rows(64)),
            ((16384, 4, 4, 0x1000, 0x2000), SgemvKernel::Vec4Rows(4)),
            // Narrow rows float4 loads cannot take are staged while the gaps between them are narrower
            // than a sector; wider gaps go row by row.
            ((16384, 16, 16, 0x1004, 0x2000), SgemvKernel::StagedRows),
            ((16384, 8, 9, 0x1000, 0x2000), SgemvKernel::StagedRows),
            ((16384, 4, 4, 0x1000, 0x2004), SgemvKernel::StagedRows),
            ((16384, 30, 32, 0x1000, 0x2000), SgemvKernel::StagedRows),
            ((16384, 32, 39, 0x1000, 0x2000), SgemvKernel::StagedRows),
            ((16384, 1, 1, 0x1000, 0x2000), SgemvKernel::StagedRows),
            ((16384, 16, 24, 0x1004, 0x2000), SgemvKernel::RowsPerWarp(2)),
            ((16384, 8, 17, 0x1000, 0x2000), SgemvKernel::RowsPerWarp(4)),
            ((16384, 4, 12, 0x1000, 0x2004), SgemvKernel::RowsPerWarp(8)),
            ((16384, 0, 0, 0x1000, 0x2000), SgemvKernel::RowsPerWarp(8)),
            ((16384, 30, 40, 0x1000, 0x2000), SgemvKernel::N32),
            ((16384, 33, 33, 0x1004, 0x2000), SgemvKernel::StagedRows),
            ((16384, 97, 97, 0x1000, 0x2000), SgemvKernel::StagedRows),
            ((16384, 100, 107, 0x1000, 0x2000), SgemvKernel::StagedRows),
            ((16384, 100, 108, 0x1004, 0x2000), SgemvKernel::WarpRowsScalar),
            ((16384, 128, 128, 0x1000, 0x2000), SgemvKernel::N128),
            ((16384, 100, 100, 0x1000, 0x2000), SgemvKernel::N128),
            ((16384, 128, 128, 0x1004, 0x2000), SgemvKernel::StagedRows),
            ((16384, 129, 132, 0x1000, 0x2000), SgemvKernel::WarpRowsVec4),
            ((16384, 129, 129, 0x1000, 0x2000), SgemvKernel::WarpRowsScalar),
            ((100, 4096, 4096, 0x1000, 0x2000), SgemvKernel::SplitKVec4),
            ((100, 4096, 4097, 0x1000, 0x2000), SgemvKernel::SplitKShifted),
            ((100, 4096, 4096, 0x1004, 0x2000), SgemvKernel::SplitKShifted),
            ((100, 4096, 4096, 0x1000, 0x2008), SgemvKernel::SplitKShifted),
        ];
        for &((m, n, lda, a, x), want) in table.iter() {
            let got = shape(m, n, lda, a, x).auto_kernel();
            assert_eq!(got, want, "m {} n {} lda {} A {:#x} x {:#x}", m, n, lda, a, x);
        }
        for k in SgemvKernel::explicit() {
            let s = shape(10, 1, 1, 0, 0);
            let _ = check(k, &s);
        }
    }

    #[test]
    fn auto_takes_any_lda_below_n_without_panicking() {
        // Validation refuses lda < n, but `SgemvShape` is public: Auto still names a kernel that
        // takes the width, and never the staged one (its tiles assume rows that do not overlap).
        for &n in [1usize, 3, 4, 8, 16, 17, 31, 32, 33, 100, 1000, 5000].iter() {
            for &lda in [0usize, n / 2, n - 1].iter() {
                for &(a, x) in [(0x1000u64, 0x2000u64), (0x1004, 0x2000), (0x1000, 0x2004)].iter() {
                    let s = shape(64, n, lda, a, x);
                    let k = s.auto_kernel();
                    assert_ne!(k, SgemvKernel::StagedRows, "n {} lda {}", n, lda);
                    assert!(s.width_limit(k).is_none() && k.op() == Op::N, "n {} lda {}: {:?}", n, lda, k);
                    let t = op_shape(Op::T, 64, n, lda, a).auto_kernel();
                    assert!(op_shape(Op::T, 64, n, lda, a).width_limit(t).is_none() && t.op() == Op::T);
                }
            }
        }
        assert_eq!(shape(64, 16, 8, 0x1004, 0x2000).auto_kernel(), SgemvKernel::RowsPerWarp(2));
        assert_eq!(shape(64, 3, 2, 0x1000, 0x2000).auto_kernel(), SgemvKernel::RowsPerWarp(8));
    }

    #[test]
    fn sgemv_kernels_take_one_op() {
        for k in SgemvKernel::explicit() {
            let other = if k.op() == Op::N { Op::T } else { Op::N };
            assert!(
                matches!(check(k, &op_shape(other, 64, 64, 64, 0x1000)), Err(Error::Unsupported { .. })),
                "{:?}",
                k
            );
        }
        assert!(check(SgemvKernel::TVec4, &op_shape(Op::T, 64, 64, 64, 0x1000)).is_ok());
        assert!(matches!(
            check(SgemvKernel::TVec4, &op_shape(Op::T, 64, 6, 8, 0x1000)),
            Err(Error::Unsupported { .. })
        ));
        assert!(matches!(
            check(SgemvKernel::TVec4, &op_shape(Op::T, 64, 64, 64, 0x1008)),
            Err(Error::Misaligned { what: "A", .. })
        ));
        assert!(check(SgemvKernel::TScalar, &op_shape(Op::T, 64, 3, 5, 0x1001)).is_ok());
        assert!(check(SgemvKernel::TStreamVec4, &op_shape(Op::T, 64, 64, 64, 0x1000)).is_ok());
        assert!(matches!(
            check(SgemvKernel::TStreamVec4, &op_shape(Op::T, 64, 6, 8, 0x1000)),
            Err(Error::Unsupported { .. })
        ));
        assert!(matches!(
            check(SgemvKernel::TStreamVec4, &op_shape(Op::T, 64, 64, 68, 0x1008)),
            Err(Error::Misaligned { what: "A", .. })
        ));
        assert!(check(SgemvKernel::TStreamScalar, &op_shape(Op::T, 64, 3, 5, 0x1001)).is_ok());
    }

    #[test]
    fn stripes_take_the_deepest_depth_whose_wave_holds_every_tile() {
        // At 1, 2, 3 blocks per SM for depth 32, 16, 8 on 132 SMs; none past them all.
        assert_eq!(stripe_depths().collect::<Vec<_>>(), [8, 16, 32]);
        let slots = [3 * 132, 2 * 132, 132];
        let table = [(1usize, Some(32u32)), (128, Some(32)), (132, Some(32)), (133, Some(16)), (264, Some(16))];
        for &(tiles, want) in table.iter().chain([(265, Some(8)), (396, Some(8)), (397, None)].iter()) {
            assert_eq!(stripes_depth(tiles, &slots), want, "{} tiles", tiles);
        }
    }
}
