//! Strided-batched gemv, Op::N, with 16-byte loads of A and x: eight elements per lane step
//! (one `ld.global.nc.v4` of halves, two of f32), products and sums in f32. Rows of n < 8·32
//! take fewer lanes each, so that a warp still issues full 512-byte requests over several rows.
//!
//! # Safety
//! As [`super::batched`]'s, and: `incx == 1`; A's and x's base addresses, `lda`, `stride_a`
//! and `stride_x` (in bytes of their types) multiples of 16; `lanes` a power of two ≤ 32, the
//! same in every thread; blocks of a whole number of warps, any grid.
//!
//! # Thread mapping
//! A warp is `32 / lanes` groups of `lanes` lanes, a group per (problem, row). Persistent warps
//! stride over tiles of `ROWS · 32 / lanes` consecutive rows of the batch: group g takes rows
//! g, g + groups, … of the tile (so neighbouring groups read neighbouring rows), `ROWS` rows'
//! loads in flight together, two vectors of each where the row has them; lane l of a group
//! reads vectors l, l + lanes, … of the row, the last n % 8 columns one per lane. Each group folds its lanes by butterfly shuffles in a
//! fixed order, so the result does not depend on timing.
use super::batched::{Batched, GemvElement};
use super::row_tiles::for_each_tile;
use crate::config::{SGEMV_BATCHED_ROWS, WARP_SIZE};
use crate::halves::HalfFloat;
use crate::ops::Sum;
use crate::thread::load_v4;
use crate::warp;
use half::{bf16, f16};

const ROWS: usize = SGEMV_BATCHED_ROWS;
const LANES: usize = WARP_SIZE as usize;
/// Elements of one lane step: 16 bytes of halves.
const VECTOR: usize = 8;

/// An element type read eight at a time, widened to f32.
pub trait Vector8: GemvElement {
    /// The eight elements at `p` (16-byte aligned).
    unsafe fn load8(p: *const Self) -> [f32; 8];
}

impl Vector8 for f32 {
    #[inline(always)]
    unsafe fn load8(p: *const f32) -> [f32; 8] {
        let lo = load_v4(p as *const [u32; 4]);
        let hi = load_v4(p.add(4) as *const [u32; 4]);
        let f = f32::from_bits;
        [f(lo[0]), f(lo[1]), f(lo[2]), f(lo[3]), f(hi[0]), f(hi[1]), f(hi[2]), f(hi[3])]
    }
}

macro_rules! half_vector8 {
    ($($t:ident),*) => {$(
        impl Vector8 for $t {
            #[inline(always)]
            unsafe fn load8(p: *const $t) -> [f32; 8] {
                let w = load_v4(p as *const [u32; 4]);
                let (p0, p1, p2, p3) = ($t::widen_pair(w[0]), $t::widen_pair(w[1]), $t::widen_pair(w[2]), $t::widen_pair(w[3]));
                [p0[0], p0[1], p1[0], p1[1], p2[0], p2[1], p3[0], p3[1]]
            }
        }
    )*};
}
half_vector8!(f16, bf16);

/// Sum of the eight products, in order.
#[inline(always)]
fn dot8(a: [f32; 8], x: [f32; 8]) -> f32 {
    let mut acc = 0.0f32;
    for k in 0..VECTOR {
        acc += a[k] * x[k];
    }
    acc
}

/// Op::N: y_b = alpha · A_b x_b + beta · y_b for every problem b, `lanes` lanes per row.
pub unsafe fn rows<A: Vector8, X: Vector8, Y: GemvElement>(g: Batched<A, X, Y>, lanes: usize) {
    let Batched { a, x, m, n, lda, incy, stride_a, stride_x, stride_y, batch, .. } = g;
    let lane = warp::lane() as usize;
    let (group, sub) = (lane / lanes, lane % lanes);
    let groups = LANES / lanes;
    let tasks = batch * m;
    let vectors = n / VECTOR;
    let tail = vectors * VECTOR;
    for_each_tile(tasks, ROWS * groups, |first| {
        // Rows past the batch's last repeat it (their sums are not stored): no branch per load.
        let mut rows = [a; ROWS];
        let mut xs = [x; ROWS];
        let mut ys = [0usize; ROWS];
        for k in 0..ROWS {
            let task = core::cmp::min(first + group + k * groups, tasks - 1);
            let (b, row) = (task / m, task % m);
            rows[k] = a.add(b * stride_a + row * lda);
            xs[k] = x.add(b * stride_x);
            ys[k] = b * stride_y + row * incy;
        }
        let mut acc = [0.0f32; ROWS];
        let mut v = sub;
        // Two vectors of each row per step while both exist: 2 · ROWS loads in flight.
        while v + lanes < vectors {
            let (mut near, mut far) = ([[0.0f32; VECTOR]; ROWS], [[0.0f32; VECTOR]; ROWS]);
            for k in 0..ROWS {
                near[k] = A::load8(rows[k].add(v * VECTOR));
                far[k] = A::load8(rows[k].add((v + lanes) * VECTOR));
            }
            for k in 0..ROWS {
                acc[k] += dot8(near[k], X::load8(xs[k].add(v * VECTOR)));
                acc[k] += dot8(far[k], X::load8(xs[k].add((v + lanes) * VECTOR)));
            }
            v += 2 * lanes;
        }
        if v < vectors {
            let mut av = [[0.0f32; VECTOR]; ROWS];
            for k in 0..ROWS {
                av[k] = A::load8(rows[k].add(v * VECTOR));
            }
            for k in 0..ROWS {
                acc[k] += dot8(av[k], X::load8(xs[k].add(v * VECTOR)));
            }
        }
        if sub < n - tail {
            for k in 0..ROWS {
                acc[k] += (*rows[k].add(tail + sub)).to_f32() * (*xs[k].add(tail + sub)).to_f32();
            }
        }
        for k in 0..ROWS {
            let dot = warp::group_reduce::<Sum<f32>>(acc[k], lanes as u32);
            if sub == 0 && first + group + k * groups < tasks {
                g.store(ys[k], dot);
            }
        }
    });
}
