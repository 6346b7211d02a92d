//! Several rows per warp for narrow matrices: `W = 32 / R` lanes per row (n ≤ W), a segmented
//! shuffle reduction within each group of W lanes. R = 2 serves n = 16, R = 4 n = 8, R = 8 n = 4.
use super::problem::Gemv;
use super::row_tiles::for_each_tile;
use crate::config::SGEMV_ROW_UNROLL;
use crate::ops::Sum;
use crate::warp;

const K: usize = SGEMV_ROW_UNROLL as usize;

/// Thread mapping: lane `l` takes column `l % W` of row `l / W` of each warp step; a tile is
/// `K` steps of R rows, all loads issued before the reductions.
pub unsafe fn rows<const R: u32, const W: u32>(g: Gemv) {
    let Gemv { a, x, m, n, lda, .. } = g;
    let lane = warp::lane();
    let (seg, col) = ((lane / W) as usize, (lane % W) as usize);
    let xv = if col < n { *x.add(col) } else { 0.0 };
    for_each_tile(m, K * R as usize, |first| {
        let mut prod = [0.0f32; K];
        for k in 0..K {
            let row = first + k * R as usize + seg;
            if row < m && col < n {
                prod[k] = *a.add(row * lda + col) * xv;
            }
        }
        for k in 0..K {
            let dot = warp::segment_reduce::<Sum<f32>, W>(prod[k]);
            let row = first + k * R as usize + seg;
            if col == 0 && row < m {
                g.store(row, dot);
            }
        }
    });
}
