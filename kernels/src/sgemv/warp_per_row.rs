//! One warp per row with scalar loads: any alignment and any `lda`.
use super::problem::Gemv;
use super::row_tiles::for_each_tile;
use crate::config::{SGEMV_ROW_UNROLL, WARP_SIZE};
use crate::ops::Sum;
use crate::warp;

const K: usize = SGEMV_ROW_UNROLL as usize;

/// n ≤ 32 (specialized for 32): lane j multiplies column j, a shuffle reduction per row.
/// Thread mapping: a warp per row, tiles of `K` rows with all loads issued before reducing.
pub unsafe fn n32(g: Gemv) {
    let Gemv { a, x, m, n, lda, .. } = g;
    let lane = warp::lane() as usize;
    let xv = if lane < n { *x.add(lane) } else { 0.0 };
    for_each_tile(m, K, |first| {
        let mut prod = [0.0f32; K];
        for k in 0..K {
            if first + k < m && lane < n {
                prod[k] = *a.add((first + k) * lda + lane) * xv;
            }
        }
        for k in 0..K {
            let dot = warp::reduce::<Sum<f32>>(prod[k]);
            if lane == 0 && first + k < m {
                g.store(first + k, dot);
            }
        }
    });
}

/// Any n: lanes stride over the row's columns by 32, then a shuffle reduction.
/// Thread mapping: a warp per row, tiles of `K` rows.
pub unsafe fn general(g: Gemv) {
    let Gemv { a, x, m, n, lda, .. } = g;
    let lane = warp::lane() as usize;
    for_each_tile(m, K, |first| {
        for row in first..core::cmp::min(first + K, m) {
            let mut acc = 0.0f32;
            let mut j = lane;
            while j < n {
                acc += *a.add(row * lda + j) * *x.add(j);
                j += WARP_SIZE as usize;
            }
            let dot = warp::reduce::<Sum<f32>>(acc);
            if lane == 0 {
                g.store(row, dot);
            }
        }
    });
}
