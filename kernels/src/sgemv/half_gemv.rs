//! gemv by element types: A in f16 or bf16, x and y each f32 or A's type (cuBLAS's HSH/HSS and
//! TST/TSS among them), products and sums in f32, a half-precision y rounded to nearest even;
//! and f32 throughout with 16-byte loads (the `_nv`/`_tv` pair that `sgemv_batched`'s `Auto`
//! takes for aligned layouts; its scalar kernels are `sgemv_batched_n`/`_t`).
//! Every entry takes the batched layout (`incx`, `incy`, strides, `batch`) and runs the batched
//! kernels' bodies ([`super::batched`]); the `_nv` entries (Op::N with 16-byte loads) take
//! `lanes` per row after it and run [`super::vector_batched`]'s, the `_tv` entries (Op::T with
//! 16-byte loads) `lanes`, `rows_per_split`, partials and counters and run
//! [`super::vector_columns`]'s, and the `_ns` and `_ns4` entries (Op::N on short rows of halves,
//! A and x f16 or bf16; eight and four rows per group) take `lanes` and run
//! [`super::short_rows`]'s.
//!
//! # Safety
//! As [`super::batched`]'s, in elements of each buffer's own type: A's, x's and y's spans in
//! bounds for every problem, the problems' y disjoint, blocks of `SGEMV_BATCHED_BLOCK` (Op::N)
//! or `SGEMV_BATCHED_T_BLOCK` (Op::T) threads; the `_nv`, `_ns`/`_ns4` and `_tv` entries as
//! [`super::vector_batched`]'s, [`super::short_rows`]'s and [`super::vector_columns`]'s
//! (alignment, lanes, grid).
//!
//! # Thread mapping
//! That of `batched::rows` (Op::N), `batched::columns` (Op::T), `vector_batched::rows`
//! (`_nv`), `short_rows::rows` (`_ns`), `short_rows::shallow_rows` (`_ns4`) and
//! `vector_columns::columns` (`_tv`).
use super::kinds::Op;

/// One gemv entry point by element types: its PTX name, the element type names of A, x and y,
/// and its op. Launched as the batched f32 kernel of the same op (`SgemvKernel::BatchedN`/`BatchedT`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GemvEntry {
    pub name: &'static str,
    pub a: &'static str,
    pub x: &'static str,
    pub y: &'static str,
    pub op: Op,
    pub loads: GemvLoads,
}

/// How a gemv entry reads A, and which plan's arguments it takes after the batched layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GemvLoads {
    /// One element at a time, any alignment and increment; no more arguments.
    Scalar,
    /// 16 bytes of A per step (aligned rows; Op::N also `incx == 1`). `_nv`: lanes; `_tv`:
    /// lanes, rows per split, partials, counters.
    Vector,
    /// Op::N on short rows of halves (`_ns`), 16 bytes per step as `Vector`: lanes.
    ShortRows,
    /// As `ShortRows`, four rows per group instead of eight (`_ns4`): lanes.
    ShallowShortRows,
}

/// The table below makes, from one line per kernel, its entry point (on the GPU) and its
/// [`GemvEntry`] (everywhere).
macro_rules! half_gemv_kernels {
    ($($name:ident: $a:ident, $x:ident, $y:ident, $op:ident, $loads:ident => $body:path $(, $extra:ident: $t:ty)*;)*) => {
        /// Every gemv entry point by element types, in the order the host resolves them.
        pub const GEMV_KERNELS: &[GemvEntry] = &[$(GemvEntry {
            name: stringify!($name),
            a: stringify!($a),
            x: stringify!($x),
            y: stringify!($y),
            op: Op::$op,
            loads: GemvLoads::$loads,
        }),*];
        $(
            #[cfg(target_os = "cuda")]
            #[cuda_std::kernel]
            #[allow(clippy::too_many_arguments)]
            pub unsafe fn $name(
                a: &[$a], x: &[$x], m: usize, n: usize, lda: usize, alpha: f32, beta: f32, y: *mut $y,
                incx: usize, incy: usize, stride_a: usize, stride_x: usize, stride_y: usize, batch: usize,
                $($extra: $t,)*
            ) {
                crate::grid_dependency::wait_for_prerequisite_grids();
                let (a, x) = (a.as_ptr(), x.as_ptr());
                $body(super::batched::Batched {
                    a, x, y, m, n, lda, alpha, beta, incx, incy, stride_a, stride_x, stride_y, batch,
                } $(, $extra)*);
            }
        )*
    };
}

#[cfg(target_os = "cuda")]
use half::{bf16, f16};

half_gemv_kernels! {
    gemv_f16_f32_f32_n: f16, f32, f32, N, Scalar => super::batched::rows;
    gemv_f16_f32_f32_nv: f16, f32, f32, N, Vector => super::vector_batched::rows, lanes: usize;
    gemv_f16_f32_f32_t: f16, f32, f32, T, Scalar => super::batched::columns;
    gemv_f16_f32_f32_tv: f16, f32, f32, T, Vector => super::vector_columns::columns, lanes: usize, rows_per_split: usize, partials: *mut f32, counters: *mut u32;
    gemv_f16_f32_f16_n: f16, f32, f16, N, Scalar => super::batched::rows;
    gemv_f16_f32_f16_nv: f16, f32, f16, N, Vector => super::vector_batched::rows, lanes: usize;
    gemv_f16_f32_f16_t: f16, f32, f16, T, Scalar => super::batched::columns;
    gemv_f16_f32_f16_tv: f16, f32, f16, T, Vector => super::vector_columns::columns, lanes: usize, rows_per_split: usize, partials: *mut f32, counters: *mut u32;
    gemv_f16_f16_f32_n: f16, f16, f32, N, Scalar => super::batched::rows;
    gemv_f16_f16_f32_nv: f16, f16, f32, N, Vector => super::vector_batched::rows, lanes: usize;
    gemv_f16_f16_f32_ns: f16, f16, f32, N, ShortRows => super::short_rows::rows, lanes: usize;
    gemv_f16_f16_f32_ns4: f16, f16, f32, N, ShallowShortRows => super::short_rows::shallow_rows, lanes: usize;
    gemv_f16_f16_f32_t: f16, f16, f32, T, Scalar => super::batched::columns;
    gemv_f16_f16_f32_tv: f16, f16, f32, T, Vector => super::vector_columns::columns, lanes: usize, rows_per_split: usize, partials: *mut f32, counters: *mut u32;
    gemv_f16_f16_f16_n: f16, f16, f16, N, Scalar => super::batched::rows;
    gemv_f16_f16_f16_nv: f16, f16, f16, N, Vector => super::vector_batched::rows, lanes: usize;
    gemv_f16_f16_f16_ns: f16, f16, f16, N, ShortRows => super::short_rows::rows, lanes: usize;
    gemv_f16_f16_f16_ns4: f16, f16, f16, N, ShallowShortRows => super::short_rows::shallow_rows, lanes: usize;
    gemv_f16_f16_f16_t: f16, f16, f16, T, Scalar => super::batched::columns;
    gemv_f16_f16_f16_tv: f16, f16, f16, T, Vector => super::vector_columns::columns, lanes: usize, rows_per_split: usize, partials: *mut f32, counters: *mut u32;
    gemv_bf16_f32_f32_n: bf16, f32, f32, N, Scalar => super::batched::rows;
    gemv_bf16_f32_f32_nv: bf16, f32, f32, N, Vector => super::vector_batched::rows, lanes: usize;
    gemv_bf16_f32_f32_t: bf16, f32, f32, T, Scalar => super::batched::columns;
    gemv_bf16_f32_f32_tv: bf16, f32, f32, T, Vector => super::vector_columns::columns, lanes: usize, rows_per_split: usize, partials: *mut f32, counters: *mut u32;
    gemv_bf16_f32_bf16_n: bf16, f32, bf16, N, Scalar => super::batched::rows;
    gemv_bf16_f32_bf16_nv: bf16, f32, bf16, N, Vector => super::vector_batched::rows, lanes: usize;
    gemv_bf16_f32_bf16_t: bf16, f32, bf16, T, Scalar => super::batched::columns;
    gemv_bf16_f32_bf16_tv: bf16, f32, bf16, T, Vector => super::vector_columns::columns, lanes: usize, rows_per_split: usize, partials: *mut f32, counters: *mut u32;
    gemv_bf16_bf16_f32_n: bf16, bf16, f32, N, Scalar => super::batched::rows;
    gemv_bf16_bf16_f32_nv: bf16, bf16, f32, N, Vector => super::vector_batched::rows, lanes: usize;
    gemv_bf16_bf16_f32_ns: bf16, bf16, f32, N, ShortRows => super::short_rows::rows, lanes: usize;
    gemv_bf16_bf16_f32_ns4: bf16, bf16, f32, N, ShallowShortRows => super::short_rows::shallow_rows, lanes: usize;
    gemv_bf16_bf16_f32_t: bf16, bf16, f32, T, Scalar => super::batched::columns;
    gemv_bf16_bf16_f32_tv: bf16, bf16, f32, T, Vector => super::vector_columns::columns, lanes: usize, rows_per_split: usize, partials: *mut f32, counters: *mut u32;
    gemv_bf16_bf16_bf16_n: bf16, bf16, bf16, N, Scalar => super::batched::rows;
    gemv_bf16_bf16_bf16_nv: bf16, bf16, bf16, N, Vector => super::vector_batched::rows, lanes: usize;
    gemv_bf16_bf16_bf16_ns: bf16, bf16, bf16, N, ShortRows => super::short_rows::rows, lanes: usize;
    gemv_bf16_bf16_bf16_ns4: bf16, bf16, bf16, N, ShallowShortRows => super::short_rows::shallow_rows, lanes: usize;
    gemv_bf16_bf16_bf16_t: bf16, bf16, bf16, T, Scalar => super::batched::columns;
    gemv_bf16_bf16_bf16_tv: bf16, bf16, bf16, T, Vector => super::vector_columns::columns, lanes: usize, rows_per_split: usize, partials: *mut f32, counters: *mut u32;
    gemv_f32_f32_f32_nv: f32, f32, f32, N, Vector => super::vector_batched::rows, lanes: usize;
    gemv_f32_f32_f32_tv: f32, f32, f32, T, Vector => super::vector_columns::columns, lanes: usize, rows_per_split: usize, partials: *mut f32, counters: *mut u32;
}
