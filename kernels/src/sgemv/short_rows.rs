//! Strided-batched gemv, Op::N, on short rows of halves (attention heads of 64 or 128: at most
//! one 16-byte step per lane): `DEPTH` rows per group of lanes in flight, x loaded once per
//! tile; eight ([`RowWalk::Short`], the `_ns` entries) or four ([`RowWalk::ShallowShort`],
//! `_ns4`). These are entries of their own, apart from [`super::vector_batched`]'s longer walks,
//! so that their own registers set their occupancy.
//!
//! # Safety
//! As [`super::vector_batched`]'s; A and x of halves.
//!
//! # Thread mapping
//! A warp is `32 / lanes` groups of `lanes` lanes. Persistent warps stride over tiles of
//! `DEPTH · 32 / lanes` consecutive rows of the batch; group g takes rows g, g + groups, … of
//! the tile (neighbouring groups read neighbouring rows), and lane l reads step l of each, the
//! last n % 8 columns one per lane. A tile inside one problem addresses its rows from one base
//! and loads x once; a tile across problems or past the batch (at most one per problem
//! boundary) takes each row's own problem. Each group folds its lanes by butterfly shuffles in
//! a fixed order, so the result does not depend on timing.
use super::batched::{Batched, GemvElement};
use super::row_tiles::for_each_tile;
use super::row_walk::{RowWalk, ROW_STEP};
use super::vector_batched::{dot8, place, store_rows, tail_product, y_of_task, Vector8};
use crate::config::{SGEMV_SHALLOW_DEPTH, SGEMV_VECTOR_DEPTH};

const VECTOR: usize = ROW_STEP;

/// Op::N: y_b = alpha · A_b x_b + beta · y_b for every problem b, `lanes` lanes per row, as
/// [`RowWalk::Short`] (eight rows per group).
pub unsafe fn rows<A: Vector8, X: Vector8, Y: GemvElement>(g: Batched<A, X, Y>, lanes: usize) {
    walk::<A, X, Y, SGEMV_VECTOR_DEPTH>(g, lanes, RowWalk::Short)
}

/// As [`rows`], as [`RowWalk::ShallowShort`] (four rows per group).
pub unsafe fn shallow_rows<A: Vector8, X: Vector8, Y: GemvElement>(g: Batched<A, X, Y>, lanes: usize) {
    walk::<A, X, Y, SGEMV_SHALLOW_DEPTH>(g, lanes, RowWalk::ShallowShort)
}

/// The tiles of `walk`, whose rows per group are `DEPTH`.
#[inline(always)]
unsafe fn walk<A: Vector8, X: Vector8, Y: GemvElement, const DEPTH: usize>(
    g: Batched<A, X, Y>,
    lanes: usize,
    walk: RowWalk,
) {
    for_each_tile(g.batch * g.m, walk.tile_rows(lanes), |first| tile::<A, X, Y, DEPTH>(&g, lanes, first));
}

/// The tile of rows from task `first`: inside one problem from one base, else [`split_tile`].
#[inline(always)]
unsafe fn tile<A: Vector8, X: Vector8, Y: GemvElement, const DEPTH: usize>(
    g: &Batched<A, X, Y>,
    lanes: usize,
    first: usize,
) {
    let Batched { a, x, m, n, lda, stride_a, stride_x, batch, .. } = *g;
    let (group, sub, groups) = place(lanes);
    let last = first + DEPTH * groups - 1;
    let b = first / m;
    // The same on every lane of the warp (first is the warp's): the shuffles stay converged.
    if last >= batch * m || last / m != b {
        return split_tile::<A, X, Y, DEPTH>(g, lanes, first);
    }
    let x_b = x.add(b * stride_x);
    let row0 = a.add(b * stride_a + (first - b * m + group) * lda);
    let step = sub < n / VECTOR;
    let xv = if step { X::load8(x_b.add(sub * VECTOR)) } else { [0.0; VECTOR] };
    let mut raw = [A::ZERO; DEPTH];
    if step {
        for k in 0..DEPTH {
            raw[k] = A::load_raw(row0.add(k * groups * lda + sub * VECTOR));
        }
    }
    let mut acc = [0.0f32; DEPTH];
    for k in 0..DEPTH {
        acc[k] = dot8(A::widen8(raw[k]), xv) + tail_product(row0.add(k * groups * lda), x_b, n, sub);
    }
    let y_b = b * g.stride_y + (first - b * m + group) * g.incy;
    store_rows(g, lanes, acc, |k| Some(y_b + k * groups * g.incy));
}

/// A tile across problems or past the batch: each row from its own problem, rows past the
/// batch left out.
#[inline(always)]
unsafe fn split_tile<A: Vector8, X: Vector8, Y: GemvElement, const DEPTH: usize>(
    g: &Batched<A, X, Y>,
    lanes: usize,
    first: usize,
) {
    let Batched { a, x, m, n, lda, stride_a, stride_x, batch, .. } = *g;
    let (group, sub, groups) = place(lanes);
    let mut acc = [0.0f32; DEPTH];
    for k in 0..DEPTH {
        let task = first + group + k * groups;
        if task < batch * m {
            let (row, x_b) = (a.add(task / m * stride_a + task % m * lda), x.add(task / m * stride_x));
            if sub < n / VECTOR {
                acc[k] = dot8(A::load8(row.add(sub * VECTOR)), X::load8(x_b.add(sub * VECTOR)));
            }
            acc[k] += tail_product(row, x_b, n, sub);
        }
    }
    store_rows(g, lanes, acc, y_of_task(g, lanes, first));
}
