//! Strided-batched gemv with BLAS strides on x and y: `batch` problems, problem b reading
//! `A + b·stride_a`, `x + b·stride_x` and writing `y + b·stride_y`, entries of x and y
//! `incx` and `incy` apart. Scalar loads, so any alignment; one launch for the whole batch.
//! The host also runs these for a single problem whose incx or incy is above 1. Generic over
//! the element types of A, x and y ([`GemvElement`]: f32, f16, bf16); products and sums in f32.
//!
//! # Safety
//! For every b < batch: A's (m − 1)·lda + n elements from `b·stride_a`, x's and y's entries
//! (`1 + (len − 1)·inc` elements from `b·stride_x`, `b·stride_y`) in bounds; the problems' y
//! share no element. `batch · m` (Op::N) and `batch · ⌈n / 32⌉` (Op::T) fit in usize. Blocks
//! of `SGEMV_BATCHED_BLOCK` (Op::N) or `SGEMV_BATCHED_T_BLOCK` (Op::T) threads, any grid.
//!
//! # Thread mapping
//! - `rows` (Op::N): a warp per (problem, row), persistent warps over the batch's rows in tiles
//!   of `ROWS` (their loads issued together); lanes stride over the columns by 32.
//! - `columns` (Op::T): a block per (problem, 32-column tile), blocks striding over them; lane
//!   j owns column j of the tile, warp w rows w, w + W, … (`UNROLL` rows in flight), then the
//!   block folds the warps' sums in warp order through shared memory.
use super::problem::Gemv;
use super::row_tiles::for_each_tile;
use crate::halves::HalfFloat;
use half::{bf16, f16};
use crate::block::sync_threads;
use crate::config::{SGEMV_BATCHED_ROWS, SGEMV_BATCHED_T_BLOCK, WARP_SIZE};
use crate::ops::Sum;
use crate::shared::shared_array;
use crate::thread::{block_index, grid_blocks};
use crate::warp;
use cuda_std::thread::thread_idx_x;

const ROWS: usize = SGEMV_BATCHED_ROWS;
/// Rows a thread of `columns` loads before adding: enough bytes in flight per SM.
const UNROLL: usize = 8;
const LANES: usize = WARP_SIZE as usize;
const WARPS: usize = (SGEMV_BATCHED_T_BLOCK / WARP_SIZE) as usize;

/// An element of A, x or y: widened to f32 to multiply, y rounded back to nearest even.
pub trait GemvElement: Copy {
    fn to_f32(self) -> f32;
    fn from_f32(v: f32) -> Self;
}

impl GemvElement for f32 {
    #[inline(always)]
    fn to_f32(self) -> f32 {
        self
    }
    #[inline(always)]
    fn from_f32(v: f32) -> f32 {
        v
    }
}

/// `$t` rounded from f32 by `$inst` (round to nearest even, no `.ftz`).
macro_rules! half_element {
    ($($t:ident: $inst:literal;)*) => {$(
        impl GemvElement for $t {
            #[inline(always)]
            fn to_f32(self) -> f32 {
                self.widen()
            }
            #[inline(always)]
            fn from_f32(v: f32) -> $t {
                let d: u16;
                unsafe {
                    asm!(concat!($inst, " {0}, {1};"), out(reg16) d, in(reg32) v.to_bits(), options(pure, nomem, nostack));
                }
                $t::from_bits(d)
            }
        }
    )*};
}
half_element! {
    f16: "cvt.rn.f16.f32";
    bf16: "cvt.rn.bf16.f32";
}

/// One batched call as the kernels see it: `batch` problems `y_b = alpha · op(A_b) x_b +
/// beta · y_b` over element types A, X and Y.
#[derive(Clone, Copy)]
pub struct Batched<A, X, Y> {
    pub a: *const A,
    pub x: *const X,
    pub y: *mut Y,
    pub m: usize,
    pub n: usize,
    pub lda: usize,
    pub alpha: f32,
    pub beta: f32,
    pub incx: usize,
    pub incy: usize,
    pub stride_a: usize,
    pub stride_x: usize,
    pub stride_y: usize,
    pub batch: usize,
}

impl<A: GemvElement, X: GemvElement, Y: GemvElement> Batched<A, X, Y> {
    /// Writes y's element `i` (from y's start) = `alpha · dot + beta · y`, not reading y when
    /// beta = 0.
    #[inline(always)]
    pub(super) unsafe fn store(&self, i: usize, dot: f32) {
        let p = self.y.add(i);
        let v = if self.beta == 0.0 { self.alpha * dot } else { self.alpha * dot + self.beta * (*p).to_f32() };
        *p = Y::from_f32(v);
    }
}

/// The f32 call of the sgemv table's entry points (their extra arguments, in order).
#[inline(always)]
fn of_f32(g: Gemv, strides: [usize; 6]) -> Batched<f32, f32, f32> {
    let [incx, incy, stride_a, stride_x, stride_y, batch] = strides;
    let Gemv { a, x, m, n, lda, alpha, beta, y } = g;
    Batched { a, x, y, m, n, lda, alpha, beta, incx, incy, stride_a, stride_x, stride_y, batch }
}

/// [`rows`] over f32, as the sgemv table calls it.
pub unsafe fn f32_rows(g: Gemv, incx: usize, incy: usize, stride_a: usize, stride_x: usize, stride_y: usize, batch: usize) {
    rows(of_f32(g, [incx, incy, stride_a, stride_x, stride_y, batch]))
}

/// [`columns`] over f32, as the sgemv table calls it.
pub unsafe fn f32_columns(
    g: Gemv,
    incx: usize,
    incy: usize,
    stride_a: usize,
    stride_x: usize,
    stride_y: usize,
    batch: usize,
) {
    columns(of_f32(g, [incx, incy, stride_a, stride_x, stride_y, batch]))
}

/// Where problem b's y entry i lies.
#[inline(always)]
fn y_index(b: usize, i: usize, incy: usize, stride_y: usize) -> usize {
    b * stride_y + i * incy
}

/// Op::N: y_b = alpha · A_b x_b + beta · y_b for every problem b.
pub unsafe fn rows<A: GemvElement, X: GemvElement, Y: GemvElement>(g: Batched<A, X, Y>) {
    let Batched { a, x, m, n, lda, incx, incy, stride_a, stride_x, stride_y, batch, .. } = g;
    let lane = warp::lane() as usize;
    let tasks = batch * m;
    for_each_tile(tasks, ROWS, |first| {
        // Rows past the batch's last repeat it (their sums are not stored): no branch per load.
        let mut rows = [a; ROWS];
        let mut xs = [x; ROWS];
        let mut ys = [0usize; ROWS];
        for k in 0..ROWS {
            let task = core::cmp::min(first + k, tasks - 1);
            let (b, row) = (task / m, task % m);
            rows[k] = a.add(b * stride_a + row * lda);
            xs[k] = x.add(b * stride_x);
            ys[k] = y_index(b, row, incy, stride_y);
        }
        let mut acc = [0.0f32; ROWS];
        let mut j = lane;
        while j < n {
            for k in 0..ROWS {
                acc[k] += (*rows[k].add(j)).to_f32() * (*xs[k].add(j * incx)).to_f32();
            }
            j += LANES;
        }
        for k in 0..ROWS {
            let dot = warp::reduce::<Sum<f32>>(acc[k]);
            if lane == 0 && first + k < tasks {
                g.store(ys[k], dot);
            }
        }
    });
}

/// Op::T: y_b = alpha · A_bᵀ x_b + beta · y_b for every problem b.
pub unsafe fn columns<A: GemvElement, X: GemvElement, Y: GemvElement>(g: Batched<A, X, Y>) {
    let Batched { a, x, m, n, lda, incx, incy, stride_a, stride_x, stride_y, batch, .. } = g;
    let sums = shared_array!(SHARED_BATCHED_T_SUMS: [f32; SGEMV_BATCHED_T_BLOCK as usize]);
    let tid = thread_idx_x() as usize;
    let (w, lane) = (tid / LANES, tid % LANES);
    let tiles = (n + LANES - 1) / LANES;
    let mut task = block_index();
    while task < batch * tiles {
        let (b, col) = (task / tiles, (task % tiles) * LANES + lane);
        let (a_b, x_b) = (a.add(b * stride_a), x.add(b * stride_x));
        let mut acc = 0.0f32;
        if col < n {
            let mut row = w;
            while row + (UNROLL - 1) * WARPS < m {
                let mut prod = [0.0f32; UNROLL];
                for k in 0..UNROLL {
                    let r = row + k * WARPS;
                    prod[k] = (*a_b.add(r * lda + col)).to_f32() * (*x_b.add(r * incx)).to_f32();
                }
                for k in 0..UNROLL {
                    acc += prod[k];
                }
                row += UNROLL * WARPS;
            }
            while row < m {
                acc += (*a_b.add(row * lda + col)).to_f32() * (*x_b.add(row * incx)).to_f32();
                row += WARPS;
            }
        }
        *sums.add(tid) = acc;
        sync_threads();
        if w == 0 && col < n {
            let mut dot = 0.0f32;
            for k in 0..WARPS {
                dot += *sums.add(k * LANES + lane);
            }
            g.store(y_index(b, col, incy, stride_y), dot);
        }
        sync_threads(); // the next task overwrites the sums
        task += grid_blocks();
    }
}
