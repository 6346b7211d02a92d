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
#[cfg(target_os = "cuda")]
use cuda_std::prelude::*;

use crate::config::{SGEMV_BLOCK, SGEMV_ROW_UNROLL};

pub mod half_gemv;
mod kinds;
pub mod row_walk;
pub use kinds::{Loads, Op, SgemvEntry, SgemvKernel, SgemvLaunch};

gpu_modules!(pub(crate) tile_fold);
gpu_modules!(
    block_per_row,
    problem,
    row_tiles,
    rows_per_warp,
    split_k,
    split_k_shifted,
    staged_rows,
    transposed,
    transposed_stream,
    transposed_stripes,
    vector_rows_per_warp,
    vector_warp_per_row,
    warp_per_row,
    warp_rows,
    wide_rows,
    batched,
    vector_batched,
    vector_columns,
    short_rows,
);

/// The table below makes, from one line per kernel, both its entry point (on the GPU) and its
/// [`SgemvEntry`] (everywhere). The launch kind fixes the entry point's extra arguments, so the
/// host's plan for that kind and the kernel's signature cannot drift apart.
macro_rules! sgemv_kernels {
    ($($kernel:expr => $name:ident: $body:path, $launch:ident $(($rows:expr))?, $loads:ident;)*) => {
        /// Every sgemv entry point, in the order the host resolves them.
        pub const SGEMV_KERNELS: &[SgemvEntry] = &[$(SgemvEntry {
            kernel: $kernel,
            name: stringify!($name),
            launch: SgemvLaunch::$launch $(($rows))?,
            loads: Loads::$loads,
        }),*];
        $( sgemv_kernels!(@args $launch $name $body); )*
    };
    (@args SplitK $name:ident $body:path) => {
        sgemv_kernels!(@entry $name $body, chunk: usize, partials: *mut f32, counters: *mut u32);
    };
    (@args WideRows $name:ident $body:path) => {
        sgemv_kernels!(@entry $name $body, rows: usize, partials: *mut f32, counters: *mut u32);
    };
    (@args Transposed $name:ident $body:path) => {
        sgemv_kernels!(@entry $name $body, lanes: usize, rows_per_split: usize, partials: *mut f32, counters: *mut u32);
    };
    (@args Stripes $name:ident $body:path) => {
        sgemv_kernels!(@entry $name $body, rows_per_split: usize, shift: usize, partials: *mut f32, counters: *mut u32);
    };
    (@args BatchedRows $name:ident $body:path) => {
        sgemv_kernels!(@batched $name $body);
    };
    (@args BatchedColumns $name:ident $body:path) => {
        sgemv_kernels!(@batched $name $body);
    };
    (@batched $name:ident $body:path) => {
        sgemv_kernels!(@entry $name $body, incx: usize, incy: usize, stride_a: usize, stride_x: usize, stride_y: usize, batch: usize);
    };
    (@args $other:ident $name:ident $body:path) => {
        sgemv_kernels!(@entry $name $body);
    };
    (@entry $name:ident $body:path $(, $extra:ident: $t:ty)*) => {
        #[cfg(target_os = "cuda")]
        #[kernel]
        #[allow(clippy::too_many_arguments)]
        pub unsafe fn $name(
            a: &[f32], x: &[f32], m: usize, n: usize, lda: usize, alpha: f32, beta: f32, y: *mut f32
            $(, $extra: $t)*
        ) {
            crate::grid_dependency::wait_for_prerequisite_grids();
            $body(problem::Gemv { a: a.as_ptr(), x: x.as_ptr(), m, n, lda, alpha, beta, y } $(, $extra)*);
        }
    };
}

// Kernel => entry point: body, launch (rows per warp step), loads. `TStripes(depth)`: deeper
// takes more registers, so fewer 512-thread blocks per SM (on an H200: 40, 60 and 94 registers,
// so 3, 2 and 1 blocks); the host picks the depth by the device's real occupancy.
sgemv_kernels! {
    SgemvKernel::N32 => sgemv_n32: warp_per_row::n32, RowTiles(1), Scalar;
    SgemvKernel::N128 => sgemv_n128: vector_rows_per_warp::rows::<32>, RowTiles(1), Vec4;
    SgemvKernel::RowsPerWarp(2) => sgemv_rows2: rows_per_warp::rows::<2, 16>, RowTiles(2), Scalar;
    SgemvKernel::RowsPerWarp(4) => sgemv_rows4: rows_per_warp::rows::<4, 8>, RowTiles(4), Scalar;
    SgemvKernel::RowsPerWarp(8) => sgemv_rows8: rows_per_warp::rows::<8, 4>, RowTiles(8), Scalar;
    SgemvKernel::StagedRows => sgemv_staged_rows: staged_rows::rows, StagedRows, Scalar;
    SgemvKernel::Vec4Rows(4) => sgemv_vec4_n4: vector_rows_per_warp::rows::<1>, RowTiles(32), Vec4;
    SgemvKernel::Vec4Rows(8) => sgemv_vec4_n8: vector_rows_per_warp::rows::<2>, RowTiles(16), Vec4;
    SgemvKernel::Vec4Rows(16) => sgemv_vec4_n16: vector_rows_per_warp::rows::<4>, RowTiles(8), Vec4;
    SgemvKernel::Vec4Rows(32) => sgemv_vec4_n32: vector_rows_per_warp::rows::<8>, RowTiles(4), Vec4;
    SgemvKernel::Vec4Rows(64) => sgemv_vec4_n64: vector_rows_per_warp::rows::<16>, RowTiles(2), Vec4;
    SgemvKernel::WarpScalar => sgemv_warp_scalar: warp_per_row::general, RowTiles(1), Scalar;
    SgemvKernel::WarpVec4 => sgemv_warp_vec4: vector_warp_per_row::general, RowTiles(1), Vec4;
    SgemvKernel::BlockPerRow => sgemv_block_per_row: block_per_row::block_per_row, BlockPerRow, Scalar;
    SgemvKernel::WarpRowsVec4 => sgemv_warp_rows_vec4: warp_rows::rows::<true>, RowTiles(1), Vec4;
    SgemvKernel::WarpRowsScalar => sgemv_warp_rows_scalar: warp_rows::rows::<false>, RowTiles(1), Scalar;
    SgemvKernel::SplitKVec4 => sgemv_split_k_vec4: split_k::rows::<true>, SplitK, Vec4;
    SgemvKernel::SplitKScalar => sgemv_split_k_scalar: split_k::rows::<false>, SplitK, Scalar;
    SgemvKernel::SplitKShifted => sgemv_split_k_shifted: split_k_shifted::rows, SplitK, Scalar;
    SgemvKernel::WideVec4 => sgemv_wide_vec4: wide_rows::rows, WideRows, Vec4;
    SgemvKernel::TVec4 => sgemv_t_vec4: transposed::columns::<true>, Transposed, Vec4;
    SgemvKernel::TScalar => sgemv_t_scalar: transposed::columns::<false>, Transposed, Scalar;
    SgemvKernel::TStripes(8) => sgemv_t_stripes8: transposed_stripes::columns::<8>, Stripes, Scalar;
    SgemvKernel::TStripes(16) => sgemv_t_stripes16: transposed_stripes::columns::<16>, Stripes, Scalar;
    SgemvKernel::TStripes(32) => sgemv_t_stripes32: transposed_stripes::columns::<32>, Stripes, Scalar;
    SgemvKernel::TStreamVec4 => sgemv_t_stream_vec4: transposed_stream::columns::<true>, Stream, Vec4;
    SgemvKernel::TStreamScalar => sgemv_t_stream_scalar: transposed_stream::columns::<false>, Stream, Scalar;
    SgemvKernel::BatchedN => sgemv_batched_n: batched::f32_rows, BatchedRows, Scalar;
    SgemvKernel::BatchedT => sgemv_batched_t: batched::f32_columns, BatchedColumns, Scalar;
}

impl SgemvKernel {
    /// Every kernel that can be named (all but `Auto`), in table order.
    pub fn explicit() -> impl Iterator<Item = SgemvKernel> {
        SGEMV_KERNELS.iter().map(|e| e.kernel)
    }

    /// Position in [`SGEMV_KERNELS`]; `None` for `Auto` and for instances not built
    /// (`RowsPerWarp(3)`, say).
    pub fn index(self) -> Option<usize> {
        SGEMV_KERNELS.iter().position(|e| e.kernel == self)
    }

    /// The table entry; `None` as for [`SgemvKernel::index`].
    pub fn entry(self) -> Option<&'static SgemvEntry> {
        self.index().map(|i| &SGEMV_KERNELS[i])
    }

    /// The kernel's entry point in the PTX ("" for `Auto` and instances not built).
    pub fn entry_point(self) -> &'static str {
        self.entry().map_or("", |e| e.name)
    }

    /// The product this kernel computes (`Auto`: `Op::N`, it computes either).
    pub fn op(self) -> Op {
        self.entry().map_or(Op::N, |e| e.launch.op())
    }

    /// Threads per block it is launched with.
    pub fn block(self) -> u32 {
        self.entry().map_or(SGEMV_BLOCK, |e| e.launch.block())
    }

    /// Whether it uses float4 loads (needs aligned A and x, lda % 4 == 0).
    pub fn vector_loads(self) -> bool {
        self.entry().map_or(false, |e| e.loads == Loads::Vec4)
    }

    /// Rows one warp covers per tile (`SGEMV_ROW_UNROLL` steps); 0 for kernels that are not
    /// row-tiled.
    pub fn rows_per_warp_tile(self) -> usize {
        match self.entry().map(|e| e.launch) {
            Some(SgemvLaunch::RowTiles(rows)) => (SGEMV_ROW_UNROLL * rows) as usize,
            _ => 0,
        }
    }
}
