//! One warp per row with float4 loads for any n: lanes stride over the row's float4s by 32,
//! the last n % 4 columns are scalar. Needs A and x 16-byte aligned and `lda % 4 == 0` (the
//! host checks).
use super::problem::Gemv;
use super::row_tiles::for_each_tile;
use crate::config::{SGEMV_ROW_UNROLL, WARP_SIZE};
use crate::ops::Sum;
use crate::thread::dot4;
use crate::thread::load_v4;
use crate::warp;

/// Thread mapping: a warp per row, tiles of `SGEMV_ROW_UNROLL` rows; lane `l` reads float4s
/// `l, l + 32, …` of the row.
pub unsafe fn general(g: Gemv) {
    let Gemv { a, x, m, n, lda, .. } = g;
    let lane = warp::lane() as usize;
    let n4 = n / 4;
    let rows = SGEMV_ROW_UNROLL as usize;
    for_each_tile(m, rows, |first| {
        for row in first..core::cmp::min(first + rows, m) {
            let arow = a.add(row * lda);
            let mut acc = 0.0f32;
            let mut j = lane;
            while j < n4 {
                acc += dot4(load_v4(arow.add(4 * j) as *const [u32; 4]), load_v4(x.add(4 * j) as *const [u32; 4]));
                j += WARP_SIZE as usize;
            }
            if lane < n - 4 * n4 {
                acc += *arow.add(4 * n4 + lane) * *x.add(4 * n4 + lane);
            }
            let dot = warp::reduce::<Sum<f32>>(acc);
            if lane == 0 {
                g.store(row, dot);
            }
        }
    });
}
