//! sgemv: `y = alpha * A x + beta * y`, A row-major m×n with leading dimension `lda`.
//! Each kernel's shape follows the column count so that a warp's 32 lanes stay busy and loads
//! coalesce.
//!
//! Every entry point takes `(a, x, m, n, lda, alpha, beta, y)`, shapes in 64 bits (A may hold
//! more than 2^32 elements; row offsets `row * lda` are 64-bit products). Warps are persistent: the
//! host launches at most the blocks the device keeps resident, and each warp strides over
//! tiles of rows (`for_each_tile`), so blocks do not retire after a few hundred bytes.
//!
//! # Safety
//! `a.len() >= (m - 1) * lda + n` (for m > 0), `x.len() >= n`, `y` holds m writable floats;
//! grid and block as the host's launch arithmetic gives (`SGEMV_BLOCK` threads, or
//! `SGEMV_ROW_BLOCK` for block-per-row). With `beta == 0`, `y` is not read (cuBLAS semantics).
//! The vector kernels also need `a` and `x` 16-byte aligned and `lda % 4 == 0`.
use cuda_std::prelude::*;

mod block_per_row;
mod rows_per_warp;
mod vector_rows_per_warp;
mod vector_warp_per_row;
mod warp_per_row;

/// Writes `y[row] = alpha * dot + beta * y[row]`, not reading `y` when `beta == 0`.
#[inline(always)]
unsafe fn store_y(y: *mut f32, row: usize, dot: f32, alpha: f32, beta: f32) {
    let p = y.add(row);
    *p = if beta == 0.0 { alpha * dot } else { alpha * dot + beta * *p };
}

/// Dot product of four A values with four x values (float4 loads as raw words).
#[inline(always)]
fn dot4(a: [u32; 4], x: [u32; 4]) -> f32 {
    let mut acc = 0.0f32;
    for k in 0..4 {
        acc += f32::from_bits(a[k]) * f32::from_bits(x[k]);
    }
    acc
}

/// Calls `tile(first)` for each of this warp's tiles of `rows` consecutive rows below `m`:
/// tile `w`, then `w + W`, `w + 2W`, … (w = global warp index, W = warps in the grid).
#[inline(always)]
unsafe fn for_each_tile(m: usize, rows: usize, mut tile: impl FnMut(usize)) {
    use crate::thread::{block_index, grid_blocks};
    use cuda_std::thread::{block_dim_x, thread_idx_x};
    let warps_per_block = (block_dim_x() / crate::config::WARP_SIZE) as usize;
    let warp = block_index() * warps_per_block + (thread_idx_x() / crate::config::WARP_SIZE) as usize;
    let stride = grid_blocks() * warps_per_block * rows;
    let mut first = warp * rows;
    while first < m {
        tile(first);
        first += stride;
    }
}

macro_rules! sgemv_entry {
    ($($name:ident => $body:path;)*) => {$(
        #[kernel]
        pub unsafe fn $name(a: &[f32], x: &[f32], m: usize, n: usize, lda: usize, alpha: f32, beta: f32, y: *mut f32) {
            $body(a.as_ptr(), x.as_ptr(), m, n, lda, alpha, beta, y);
        }
    )*};
}

sgemv_entry! {
    sgemv_n32 => warp_per_row::n32;
    sgemv_warp_scalar => warp_per_row::general;
    sgemv_n128 => vector_rows_per_warp::rows::<32>;
    sgemv_vec4_n64 => vector_rows_per_warp::rows::<16>;
    sgemv_vec4_n32 => vector_rows_per_warp::rows::<8>;
    sgemv_vec4_n16 => vector_rows_per_warp::rows::<4>;
    sgemv_vec4_n8 => vector_rows_per_warp::rows::<2>;
    sgemv_vec4_n4 => vector_rows_per_warp::rows::<1>;
    sgemv_warp_vec4 => vector_warp_per_row::general;
    sgemv_rows2 => rows_per_warp::rows::<2, 16>;
    sgemv_rows4 => rows_per_warp::rows::<4, 8>;
    sgemv_rows8 => rows_per_warp::rows::<8, 4>;
    sgemv_block_per_row => block_per_row::block_per_row;
}
