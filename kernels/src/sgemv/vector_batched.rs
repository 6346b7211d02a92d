//! Strided-batched gemv, Op::N, with 16-byte loads of A and x: eight elements per lane step
//! (one `ld.global.nc.v4` of halves, two of f32), products and sums in f32. Rows of n < 8·32
//! take fewer lanes each, so that a warp still issues full 512-byte requests over several rows.
//!
//! # Safety
//! As [`super::batched`]'s, and: `incx == 1`; A's and x's base addresses, `lda`, `stride_a`
//! and `stride_x` (in bytes of their types) multiples of 16; `lanes` a power of two in 8..=32
//! (a lane for each of the last n % 8 columns), the same in every thread; blocks of a whole
//! number of warps, any grid.
//!
//! # Thread mapping
//! A warp is `32 / lanes` groups of `lanes` lanes, a group per (problem, row). Persistent warps
//! stride over tiles of `rows_per_group · 32 / lanes` consecutive rows of the batch
//! ([`RowWalk`]): group g takes rows g, g + groups, … of the tile (so neighbouring groups read
//! neighbouring rows); lane l of a group reads steps l, l + lanes, … of its rows, the last
//! n % 8 columns one per lane. Medium rows keep `ROWS` rows two steps each in flight, long ones
//! `DEPTH` steps of one row; short rows of halves have their own entries
//! ([`super::short_rows`]) and walk as medium ones here. Each group folds its lanes by
//! butterfly shuffles in a fixed order, so the result does not depend on timing.
use super::batched::{Batched, GemvElement};
use super::row_tiles::for_each_tile;
use super::row_walk::{RowWalk, ROW_STEP};
use crate::config::{SGEMV_BATCHED_ROWS, SGEMV_VECTOR_DEPTH, WARP_SIZE};
use crate::halves::HalfFloat;
use crate::thread::{issue_loads_together, load_v4};
use crate::warp;
use half::{bf16, f16};

const ROWS: usize = SGEMV_BATCHED_ROWS;
const DEPTH: usize = SGEMV_VECTOR_DEPTH;
const LANES: usize = WARP_SIZE as usize;
const VECTOR: usize = ROW_STEP;

/// An element type read eight at a time, widened to f32. Loads keep the raw words, so that
/// loads in flight hold 16 bytes of registers each, and widen where they are used.
pub trait Vector8: GemvElement {
    /// The raw words of eight elements.
    type Raw: Copy;
    /// Eight zero elements.
    const ZERO: Self::Raw;
    /// Whether the eight elements are one 16-byte load (halves), not two (f32).
    const ONE_LOAD: bool = core::mem::size_of::<Self::Raw>() <= 16;
    /// The eight elements at `p` (16-byte aligned), raw.
    unsafe fn load_raw(p: *const Self) -> Self::Raw;
    /// Eight raw elements widened to f32.
    fn widen8(raw: Self::Raw) -> [f32; 8];
    /// The eight elements at `p` (16-byte aligned), widened.
    #[inline(always)]
    unsafe fn load8(p: *const Self) -> [f32; 8] {
        Self::widen8(Self::load_raw(p))
    }
}

impl Vector8 for f32 {
    type Raw = [[u32; 4]; 2];
    const ZERO: Self::Raw = [[0; 4]; 2];
    #[inline(always)]
    unsafe fn load_raw(p: *const f32) -> Self::Raw {
        [load_v4(p as *const [u32; 4]), load_v4(p.add(4) as *const [u32; 4])]
    }
    #[inline(always)]
    fn widen8([lo, hi]: Self::Raw) -> [f32; 8] {
        let f = f32::from_bits;
        [f(lo[0]), f(lo[1]), f(lo[2]), f(lo[3]), f(hi[0]), f(hi[1]), f(hi[2]), f(hi[3])]
    }
}

macro_rules! half_vector8 {
    ($($t:ident),*) => {$(
        impl Vector8 for $t {
            type Raw = [u32; 4];
            const ZERO: Self::Raw = [0; 4];
            #[inline(always)]
            unsafe fn load_raw(p: *const $t) -> Self::Raw {
                load_v4(p as *const [u32; 4])
            }
            #[inline(always)]
            fn widen8(w: Self::Raw) -> [f32; 8] {
                let (p0, p1, p2, p3) = ($t::widen_pair(w[0]), $t::widen_pair(w[1]), $t::widen_pair(w[2]), $t::widen_pair(w[3]));
                [p0[0], p0[1], p1[0], p1[1], p2[0], p2[1], p3[0], p3[1]]
            }
        }
    )*};
}
half_vector8!(f16, bf16);

/// Sum of the eight products, in order.
#[inline(always)]
pub(super) fn dot8(a: [f32; 8], x: [f32; 8]) -> f32 {
    let mut acc = 0.0f32;
    for k in 0..VECTOR {
        acc += a[k] * x[k];
    }
    acc
}

/// Op::N: y_b = alpha · A_b x_b + beta · y_b for every problem b, `lanes` lanes per row, the
/// rows walked as [`RowWalk::of_vector_rows`] says.
pub unsafe fn rows<A: Vector8, X: Vector8, Y: GemvElement>(g: Batched<A, X, Y>, lanes: usize) {
    let tasks = g.batch * g.m;
    let walk = RowWalk::of_vector_rows(tasks, g.n, [core::mem::size_of::<A>(), core::mem::size_of::<X>()], lanes);
    let rows = walk.tile_rows(lanes);
    // One loop per walk: what each hoists out of its loop stays out of the others'.
    match walk {
        RowWalk::Long => for_each_tile(tasks, rows, |first| long_tile(&g, lanes, first)),
        _ => for_each_tile(tasks, rows, |first| medium_tile(&g, lanes, first)),
    }
}

/// This lane's place: (group, lane within the group, groups per warp).
#[inline(always)]
pub(super) fn place(lanes: usize) -> (usize, usize, usize) {
    let lane = warp::lane() as usize;
    (lane / lanes, lane % lanes, LANES / lanes)
}

/// Sums each group's `acc[k]` over its lanes ([`warp::group_sums`]: each row's sum lands on
/// some lanes of the group) and stores row k's at `y_at(k)` where that is Some.
#[inline(always)]
pub(super) unsafe fn store_rows<A: GemvElement, X: GemvElement, Y: GemvElement, const K: usize>(
    g: &Batched<A, X, Y>,
    lanes: usize,
    acc: [f32; K],
    y_at: impl Fn(usize) -> Option<usize>,
) {
    let (sum, k) = warp::group_sums(acc, lanes as u32);
    let (_, sub, _) = place(lanes);
    if sub % (lanes / K) == 0 {
        if let Some(i) = y_at(k) {
            g.store(i, sum);
        }
    }
}

/// Where row k of a tile from task `first` goes in y: task `first + group + k · groups`, None
/// past the batch.
#[inline(always)]
pub(super) fn y_of_task<A, X, Y>(g: &Batched<A, X, Y>, lanes: usize, first: usize) -> impl Fn(usize) -> Option<usize> {
    let (group, _, groups) = place(lanes);
    let (m, tasks, stride_y, incy) = (g.m, g.batch * g.m, g.stride_y, g.incy);
    move |k| {
        let task = first + group + k * groups;
        if task < tasks {
            Some(task / m * stride_y + task % m * incy)
        } else {
            None
        }
    }
}

/// The products of the row's last n % 8 columns, one per lane (0 on the other lanes).
#[inline(always)]
pub(super) unsafe fn tail_product<A: GemvElement, X: GemvElement>(row: *const A, x: *const X, n: usize, sub: usize) -> f32 {
    let tail = n / VECTOR * VECTOR;
    if sub < n - tail {
        (*row.add(tail + sub)).to_f32() * (*x.add(tail + sub)).to_f32()
    } else {
        0.0
    }
}

/// [`RowWalk::Medium`]: `ROWS` rows per group, two steps of each in flight while both exist.
#[inline(always)]
unsafe fn medium_tile<A: Vector8, X: Vector8, Y: GemvElement>(g: &Batched<A, X, Y>, lanes: usize, first: usize) {
    let Batched { a, x, m, n, lda, stride_a, stride_x, batch, .. } = *g;
    let (group, sub, groups) = place(lanes);
    let tasks = batch * m;
    let vectors = n / VECTOR;
    // Rows past the batch's last repeat it (their sums are not stored): no branch per load.
    let mut rows = [a; ROWS];
    let mut xs = [x; ROWS];
    for k in 0..ROWS {
        let task = core::cmp::min(first + group + k * groups, tasks - 1);
        let (b, row) = (task / m, task % m);
        rows[k] = a.add(b * stride_a + row * lda);
        xs[k] = x.add(b * stride_x);
    }
    let mut acc = [0.0f32; ROWS];
    let mut v = sub;
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
    for k in 0..ROWS {
        acc[k] += tail_product(rows[k], xs[k], n, sub);
    }
    store_rows(g, lanes, acc, y_of_task(g, lanes, first));
}

/// [`RowWalk::Long`]: one row per group, `DEPTH` steps of it in flight. Steps of halves go in
/// batches of `DEPTH`, the last one masked, x's steps of halves loaded with them; f32 steps (32
/// bytes) go in two pipelined halves, the next half's loads out before this half's products
/// (measured: f32 batches of short rows also ran 20% faster in this build of the kernel).
#[inline(always)]
unsafe fn long_tile<A: Vector8, X: Vector8, Y: GemvElement>(g: &Batched<A, X, Y>, lanes: usize, first: usize) {
    let Batched { a, x, m, n, lda, stride_a, stride_x, batch, .. } = *g;
    let (group, sub, _) = place(lanes);
    let task = core::cmp::min(first + group, batch * m - 1);
    let (b, r) = (task / m, task % m);
    let (row, x_b) = (a.add(b * stride_a + r * lda), x.add(b * stride_x));
    let vectors = n / VECTOR;
    let mut acc = 0.0f32;
    let mut v = sub;
    if !A::ONE_LOAD {
        const HALF: usize = DEPTH / 2;
        let load = |v: usize| {
            let mut raw = [A::ZERO; HALF];
            for k in 0..HALF {
                if v + k * lanes < vectors {
                    raw[k] = A::load_raw(row.add((v + k * lanes) * VECTOR));
                }
            }
            raw
        };
        let mut cur = load(v);
        while v < vectors {
            let next = load(v + HALF * lanes);
            for k in 0..HALF {
                if v + k * lanes < vectors {
                    acc += dot8(A::widen8(cur[k]), X::load8(x_b.add((v + k * lanes) * VECTOR)));
                }
            }
            cur = next;
            v += HALF * lanes;
        }
    } else {
        while v + (DEPTH - 1) * lanes < vectors {
            let mut raw = [A::ZERO; DEPTH];
            for k in 0..DEPTH {
                raw[k] = A::load_raw(row.add((v + k * lanes) * VECTOR));
            }
            if X::ONE_LOAD {
                // x of halves: its steps load with A's, all out before the first product
                // waits (ptxas issued six of the sixteen before).
                let mut xs = [X::ZERO; DEPTH];
                for k in 0..DEPTH {
                    xs[k] = X::load_raw(x_b.add((v + k * lanes) * VECTOR));
                }
                issue_loads_together();
                for k in 0..DEPTH {
                    acc += dot8(A::widen8(raw[k]), X::widen8(xs[k]));
                }
            } else {
                for k in 0..DEPTH {
                    acc += dot8(A::widen8(raw[k]), X::load8(x_b.add((v + k * lanes) * VECTOR)));
                }
            }
            v += DEPTH * lanes;
        }
        if v < vectors {
            let mut raw = [A::ZERO; DEPTH];
            for k in 0..DEPTH {
                if v + k * lanes < vectors {
                    raw[k] = A::load_raw(row.add((v + k * lanes) * VECTOR));
                }
            }
            for k in 0..DEPTH {
                if v + k * lanes < vectors {
                    acc += dot8(A::widen8(raw[k]), X::load8(x_b.add((v + k * lanes) * VECTOR)));
                }
            }
        }
    }
    store_rows(g, lanes, [acc + tail_product(row, x_b, n, sub)], y_of_task(g, lanes, first));
}
