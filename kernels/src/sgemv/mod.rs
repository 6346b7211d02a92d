//! sgemv: `y = alpha * A x + beta * y`, A row-major m×n with leading dimension `lda`.
//! Each kernel's shape follows the column count so that a warp's 32 lanes stay busy and loads
//! coalesce.
//!
//! Every entry point takes `(a, x, m, n, lda, alpha, beta, y)`.
//!
//! # Safety
//! `a.len() >= (m - 1) * lda + n` (for m > 0), `x.len() >= n`, `y` holds m writable floats;
//! grid and block as the host's launch arithmetic gives (`SGEMV_BLOCK` threads, or
//! `SGEMV_ROW_BLOCK` for block-per-row). With `beta == 0`, `y` is not read (cuBLAS semantics).
//! The vector kernels also need `a` and `x` 16-byte aligned and `lda % 4 == 0`.
use cuda_std::prelude::*;

mod block_per_row;
mod rows_per_warp;
mod vector_warp_per_row;
mod warp_per_row;

/// Writes `y[row] = alpha * dot + beta * y[row]`, not reading `y` when `beta == 0`.
#[inline(always)]
unsafe fn store_y(y: *mut f32, row: usize, dot: f32, alpha: f32, beta: f32) {
    let p = y.add(row);
    *p = if beta == 0.0 { alpha * dot } else { alpha * dot + beta * *p };
}

/// First row of this warp's rows when each warp takes `rows` rows, and the lane.
#[inline(always)]
fn warp_first_row(rows: u32) -> (usize, u32) {
    let tid = cuda_std::thread::thread_idx_x();
    let warps_per_block = cuda_std::thread::block_dim_x() / crate::config::WARP_SIZE;
    let warp = cuda_std::thread::block_idx_x() * warps_per_block + tid / crate::config::WARP_SIZE;
    (warp as usize * rows as usize, tid % crate::config::WARP_SIZE)
}

macro_rules! sgemv_entry {
    ($($name:ident => $body:path;)*) => {$(
        #[kernel]
        pub unsafe fn $name(a: &[f32], x: &[f32], m: u32, n: u32, lda: u32, alpha: f32, beta: f32, y: *mut f32) {
            $body(a.as_ptr(), x.as_ptr(), m as usize, n as usize, lda as usize, alpha, beta, y);
        }
    )*};
}

sgemv_entry! {
    sgemv_n32 => warp_per_row::n32;
    sgemv_warp_scalar => warp_per_row::general;
    sgemv_n128 => vector_warp_per_row::n128;
    sgemv_warp_vec4 => vector_warp_per_row::general;
    sgemv_rows2 => rows_per_warp::rows::<2, 16>;
    sgemv_rows4 => rows_per_warp::rows::<4, 8>;
    sgemv_rows8 => rows_per_warp::rows::<8, 4>;
    sgemv_block_per_row => block_per_row::block_per_row;
}
