//! sgemv: `y = alpha * A x + beta * y`, A row-major m×n with leading dimension `lda`.
//! Each kernel's shape follows the column count so that a warp's 32 lanes stay busy and loads
//! coalesce.
//!
//! Every entry point takes `(a, x, m, n, lda, alpha, beta, y)`, shapes in 64 bits (A may hold
//! more than 2^32 elements; row offsets `row * lda` are 64-bit products). Warps are persistent: the
//! host launches at most the blocks the device keeps resident, and each warp strides over
//! tiles of rows (`row_tiles::for_each_tile`), so blocks do not retire after a few hundred bytes.
//!
//! # Safety
//! `a.len() >= (m - 1) * lda + n` (for m > 0), `x.len() >= n`, `y` holds m writable floats;
//! grid and block as the host's launch arithmetic gives (`SGEMV_BLOCK` threads, or
//! `SGEMV_ROW_BLOCK` for block-per-row). With `beta == 0`, `y` is not read (cuBLAS semantics).
//! The vector kernels also need `a` and `x` 16-byte aligned and `lda % 4 == 0`.
use cuda_std::prelude::*;

mod block_per_row;
mod problem;
mod row_tiles;
mod rows_per_warp;
mod split_k;
mod split_k_shifted;
mod staged_rows;
mod tile_fold;
mod transposed;
mod transposed_stream;
mod transposed_stripes;
mod vector_rows_per_warp;
mod vector_warp_per_row;
mod warp_per_row;
mod warp_rows;
mod wide_rows;

/// Entry points: `(a, x, m, n, lda, alpha, beta, y)` with 64-bit shapes, plus the extra
/// arguments each technique takes (see its file).
macro_rules! sgemv_entry {
    ($($name:ident => $body:path $(, $extra:ident: $t:ty)*;)*) => {$(
        #[kernel]
        #[allow(clippy::too_many_arguments)]
        pub unsafe fn $name(
            a: &[f32], x: &[f32], m: usize, n: usize, lda: usize, alpha: f32, beta: f32, y: *mut f32
            $(, $extra: $t)*
        ) {
            $body(problem::Gemv { a: a.as_ptr(), x: x.as_ptr(), m, n, lda, alpha, beta, y } $(, $extra)*);
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
    sgemv_staged_rows => staged_rows::rows;
    sgemv_block_per_row => block_per_row::block_per_row;
    sgemv_warp_rows_vec4 => warp_rows::rows::<true>;
    sgemv_warp_rows_scalar => warp_rows::rows::<false>;
    sgemv_split_k_vec4 => split_k::rows::<true>, chunk: usize, partials: *mut f32, counters: *mut u32;
    sgemv_split_k_scalar => split_k::rows::<false>, chunk: usize, partials: *mut f32, counters: *mut u32;
    sgemv_split_k_shifted => split_k_shifted::rows, chunk: usize, partials: *mut f32, counters: *mut u32;
    sgemv_wide_vec4 => wide_rows::rows, rows: usize, partials: *mut f32, counters: *mut u32;
    sgemv_t_vec4 => transposed::columns::<true>,
        lanes: usize, rows_per_split: usize, partials: *mut f32, counters: *mut u32;
    sgemv_t_scalar => transposed::columns::<false>,
        lanes: usize, rows_per_split: usize, partials: *mut f32, counters: *mut u32;
    sgemv_t_stripes8 => transposed_stripes::columns::<8>,
        rows_per_split: usize, shift: usize, partials: *mut f32, counters: *mut u32;
    sgemv_t_stripes16 => transposed_stripes::columns::<16>,
        rows_per_split: usize, shift: usize, partials: *mut f32, counters: *mut u32;
    sgemv_t_stripes32 => transposed_stripes::columns::<32>,
        rows_per_split: usize, shift: usize, partials: *mut f32, counters: *mut u32;
    sgemv_t_stream_vec4 => transposed_stream::columns::<true>;
    sgemv_t_stream_scalar => transposed_stream::columns::<false>;
}
