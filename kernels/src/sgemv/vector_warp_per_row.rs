//! One warp per row with 16-byte (float4) loads of A and x. Needs A and x 16-byte aligned and
//! `lda % 4 == 0` (the host checks).
use super::{store_y, warp_first_row};
use crate::config::{SGEMV_ROW_UNROLL, WARP_SIZE};
use crate::ops::Sum;
use crate::thread::load_v4;
use crate::warp;

const K: usize = SGEMV_ROW_UNROLL as usize;

#[inline(always)]
fn dot4(a: [u32; 4], x: [u32; 4]) -> f32 {
    let mut acc = 0.0f32;
    for k in 0..4 {
        acc += f32::from_bits(a[k]) * f32::from_bits(x[k]);
    }
    acc
}

/// n ≤ 128, n % 4 == 0 (specialized for 128): lane j multiplies columns 4j..4j+4 with one
/// float4 load; `K` rows per warp, loads first.
pub unsafe fn n128(a: *const f32, x: *const f32, m: usize, n: usize, lda: usize, alpha: f32, beta: f32, y: *mut f32) {
    let (first, lane) = warp_first_row(K as u32);
    if first >= m {
        return;
    }
    let col = 4 * lane as usize;
    let active = col < n;
    let xv = if active { load_v4(x.add(col) as *const [u32; 4]) } else { [0; 4] };
    let mut av = [[0u32; 4]; K];
    for k in 0..K {
        if first + k < m && active {
            av[k] = load_v4(a.add((first + k) * lda + col) as *const [u32; 4]);
        }
    }
    for k in 0..K {
        let dot = warp::reduce::<Sum<f32>>(dot4(av[k], xv));
        if lane == 0 && first + k < m {
            store_y(y, first + k, dot, alpha, beta);
        }
    }
}

/// Any n: lanes stride over the row's float4s by 32; the last n % 4 columns are scalar.
pub unsafe fn general(a: *const f32, x: *const f32, m: usize, n: usize, lda: usize, alpha: f32, beta: f32, y: *mut f32) {
    let (first, lane) = warp_first_row(K as u32);
    let lane = lane as usize;
    let n4 = n / 4;
    for row in first..core::cmp::min(first + K, m) {
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
            store_y(y, row, dot, alpha, beta);
        }
    }
}
