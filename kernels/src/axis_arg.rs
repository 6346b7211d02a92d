//! argmin and argmax along an axis: of each row, column or segment, over the axis reductions'
//! element types ([`crate::axis::AXIS_TYPES`]), with the arg operators of [`crate::ops::arg`]
//! (ties → smallest index; NaN the extreme both ways, the first NaN wins; -0.0 below +0.0).
//!
//! Four kernels per (op, type), `axis_arg_{kernel}_{op}_{type}`, laid out as [`crate::axis`]'s,
//! and `axis_arg_segments_{op}_{type}` ([`arg_segments_body`]):
//! - `rows`: a group of `lanes` lanes per row, chunk of a row or segment; each lane keeps the
//!   first 16-byte vector with its furthest extreme and finds the lane at the end
//!   ([`fold_arg_range`]), then the group picks among its lanes' pairs. A row per block
//!   ([`arg_rows_per_block`]) folds the lanes' vectors first and finds the lane once.
//! - `cols`: a thread per column, or per 16-byte vector of columns, over a range of rows, every
//!   (B / tile)-th row.
//! - `fold`: a group of lanes (up to four partials a lane) or a block per item picks among its
//!   chunks' (value, index) partials.
//! - `pieces`: rows split into `chunks` > 1 interleaved pieces, as [`crate::axis`]'s `pieces`
//!   ([`fold_arg_range_piece`]; `offsets` ignored), each row's pairs folded by its last piece
//!   ([`fold_if_last`]; `partials` and `tickets` before the outputs): the host's split rows. An
//!   entry of its own, so that `rows` keeps its code (its registers and speed moved with every
//!   change to it).
//! - `segments`: a warp per segment (input, segments, n, offsets, values, indices, wide), in
//!   few registers; the host's segments of a warp each.
//!
//! Indices count from the start of the row, column or segment (chunks add their offset).
//! A result is stored as a partial `ValueIndex<T>` when `partials` is not null, else as its value
//! into `values` (unless `values` is null: indices alone) and its index into `indices` (u64 when
//! `wide` is 1, else u32, truncated); a `cols` or `words` thread of one split stores its vector
//! of columns' values and indices as 16-byte vectors where they are aligned. An empty
//! row, column or segment gets the op's identity: value `T::LOWEST` (argmax) or `T::HIGHEST`
//! (argmin), index all ones (`u64::MAX`, or `u32::MAX` truncated). Deterministic: fixed lanes and
//! an order-free pick (value, then smaller index).
//!
//! # Safety
//! As [`crate::axis`], with `out` replaced by (`partials`, `values`, `indices`, `wide`): either
//! `partials` holds the accumulators `out` would, or it is null, `indices` holds one element per
//! result and `values` is null or holds one too (`indices` 8-byte elements when `wide` is 1, else 4-byte).
//!
//! # Thread mapping
//! As [`crate::axis`]: `rows` vector j of an item to lane j mod lanes of its group (with one
//! lane and whole rows, a thread per row; contiguous one-element rows, four rows in flight per
//! thread); `cols`
//! thread `tid` to the `width` columns from `(t·tile + tid mod tile)·width`, rows
//! `r0 + tid / tile + j·(B / tile)`;
//! `fold` chunk k to lane k mod lanes of its group, or thread k mod B; `pieces` as `rows`'
//! groups, piece k of row r being item r·chunks + k; `segments` segment s to warp s of the
//! grid (the grid holds them all), vector j of it to lane j mod 32.
#[cfg(target_os = "cuda")]
use crate::{
    axis::{
        fold_partials, folds_in_block, for_thread_elements, for_thread_rows, item_range, walk_columns, MAX_COLUMN_WIDTH,
    },
    block,
    column_tracks::walk_column_words,
    config::{ValueIndex, VECTOR_BYTES, WARP_SIZE},
    ops::arg::{ArgElement, ArgFold, ArgOf, Direction, FurthestTrack, Largest, Smallest, Track},
    ops::ReduceOp,
    piece_fold::walk_pieces,
    thread::{
        block_index, fold_arg_range, fold_arg_range_piece, grid_blocks, load_v4, opaque, pack_v4, store_v4,
        track_arg_range_piece, vector_split,
    },
    warp,
};
#[cfg(target_os = "cuda")]
use cuda_std::{
    prelude::*,
    thread::{block_dim_x, thread_idx_x},
};
#[cfg(target_os = "cuda")]
use half::{bf16, f16};

/// The arg ops along an axis; entry points are `axis_arg_{kernel}_{op}_{type}` over
/// [`AXIS_ARG_KERNELS`], these and [`crate::axis::AXIS_TYPES`].
pub const AXIS_ARG_OPS: [&str; 2] = ["argmin", "argmax"];

/// The axis arg kernels, as [`crate::axis::AXIS_KERNELS`] and in its order.
pub const AXIS_ARG_KERNELS: [&str; 4] = ["rows", "cols", "fold", "pieces"];

/// Where results go: partial pairs, or values and indices of the index width the caller chose.
#[cfg(target_os = "cuda")]
#[derive(Clone, Copy)]
pub(crate) struct ArgLines<T> {
    pub(crate) partials: *mut ValueIndex<T>,
    pub(crate) values: *mut T,
    pub(crate) indices: *mut u8,
    pub(crate) wide: u32,
}

#[cfg(target_os = "cuda")]
impl<T: Copy> ArgLines<T> {
    #[inline(always)]
    pub(crate) unsafe fn store(self, i: usize, v: ValueIndex<T>) {
        if !self.partials.is_null() {
            *self.partials.add(i) = v;
            return;
        }
        if !self.values.is_null() {
            *self.values.add(i) = v.value;
        }
        if self.wide != 0 {
            *(self.indices as *mut u64).add(i) = v.index;
        } else {
            *(self.indices as *mut u32).add(i) = v.index as u32;
        }
    }
}

#[cfg(target_os = "cuda")]
impl<T: ArgElement> ArgLines<T> {
    /// Stores the results `get(k)` of the `T::PER_VEC` items from `i` in 16-byte vectors, when
    /// they go to values and indices (no partials) whose bytes for these items are 16-byte
    /// aligned and whole vectors; else stores nothing and returns false.
    #[inline(always)]
    pub(crate) unsafe fn store_vector(self, i: usize, get: impl Fn(usize) -> ValueIndex<T>) -> bool {
        let index_bytes = if self.wide != 0 { 8 } else { 4 };
        // `values` may be null: its address is only computed, used where it is not.
        let (values, indices) = (self.values.wrapping_add(i) as usize, self.indices.add(i * index_bytes) as usize);
        let aligned = |p: usize| p % VECTOR_BYTES == 0;
        if !self.partials.is_null()
            || T::PER_VEC < 4
            || !aligned(indices)
            || (!self.values.is_null() && !aligned(values))
        {
            return false;
        }
        // One call to `get` per item (its value may be a load), at constant indices.
        let first = get(0);
        let mut v = [first; MAX_COLUMN_WIDTH];
        for k in 1..T::PER_VEC {
            v[k] = get(k);
        }
        if !self.values.is_null() {
            store_v4(values as *mut [u32; 4], pack_v4(|k| v[k].value));
        }
        let at = |q: usize| (indices + q * VECTOR_BYTES) as *mut [u32; 4];
        if self.wide != 0 {
            for q in 0..T::PER_VEC / 2 {
                let (a, b) = (v[2 * q].index, v[2 * q + 1].index);
                store_v4(at(q), [a as u32, (a >> 32) as u32, b as u32, (b >> 32) as u32]);
            }
        } else {
            for q in 0..T::PER_VEC / 4 {
                let i = |k: usize| v[4 * q + k].index as u32;
                store_v4(at(q), [i(0), i(1), i(2), i(3)]);
            }
        }
        true
    }
}

#[cfg(target_os = "cuda")]
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn arg_rows_body<E: ArgElement, D: Direction<E>>(
    input: *const E,
    rows: usize,
    n: usize,
    lda: usize,
    offsets: *const u64,
    lanes: u32,
    chunks: u32,
    out: ArgLines<E>,
) {
    if lanes == 1 && chunks == 1 && offsets.is_null() {
        if n == 1 && lda == 1 {
            return for_thread_elements(input, rows, |row, e| out.store(row, ValueIndex { value: e, index: 0 }));
        }
        return for_thread_rows(rows, |row| {
            let p = input.add(row * lda);
            let mut acc = ArgOf::<E, D>::identity();
            for k in 0..n {
                acc = ArgOf::<E, D>::combine(acc, ValueIndex { value: *p.add(k), index: k as u64 });
            }
            out.store(row, acc);
        });
    }
    if offsets.is_null() && folds_in_block(lanes, chunks) && block_dim_x() / lanes == chunks {
        return arg_rows_per_block::<E, D>(input, rows, n, lda, out);
    }
    let tid = thread_idx_x();
    let (group, lane) = ((tid / lanes) as usize, (tid % lanes) as usize);
    let per_block = (block_dim_x() / lanes) as usize;
    let items = rows * chunks as usize;
    // The warp's first group: every lane of a warp takes the same turns and shuffles.
    let warp_first = (tid / WARP_SIZE * WARP_SIZE / lanes) as usize;
    let step = grid_blocks() * per_block;
    let mut first = block_index() * per_block;
    while first + warp_first < items {
        let item = first + group;
        let (begin, end) =
            if item < items { item_range(item, n, lda, offsets, chunks as usize, E::PER_VEC) } else { (0, 0) };
        // Indices within the row (a chunk's from its offset in the row) or the segment.
        let origin = if offsets.is_null() && item < items { item / chunks as usize * lda } else { begin };
        let v = fold_arg_range::<E, ArgOf<E, D>>(input.add(begin), end - begin, lane, lanes as usize, begin - origin);
        let v = warp::group_reduce::<ArgOf<E, D>>(v, lanes);
        if lane == 0 && item < items {
            out.store(item, v);
        }
        first += step;
    }
}

/// `segments`: a warp per segment, in an entry of its own whose few registers (40 at most for
/// types up to 4 bytes, 48 for `rows`) keep more segments resident. Each lane tracks element
/// positions within the segment (a vector's that of its first element): its head element, its
/// vectors, then its tail element, in increasing position. The warp folds the tracks (the
/// furthest key, then the first position: [`FurthestTrack`]), and lane 0 alone reads the winner
/// again.
#[cfg(target_os = "cuda")]
#[inline(always)]
unsafe fn arg_segments_body<E: ArgElement, D: Direction<E>>(
    input: *const E,
    segments: usize,
    n: usize,
    offsets: *const u64,
    out: ArgLines<E>,
) {
    const LANES: usize = WARP_SIZE as usize;
    let lane = thread_idx_x() as usize % LANES;
    let segment = block_index() * (block_dim_x() as usize / LANES) + thread_idx_x() as usize / LANES;
    if segment >= segments {
        return;
    }
    let (begin, end) = item_range(segment, n, 0, offsets, 1, E::PER_VEC);
    let base = input.add(begin);
    let (head, nvec, tail) = vector_split(core::slice::from_raw_parts(base, end - begin));
    let vecs = base.add(head) as *const [u32; 4];
    // The lane's first position: its head element, first vector or tail element.
    let first = if lane < head {
        lane
    } else if lane < nvec {
        head + lane * E::PER_VEC
    } else if tail + lane < end - begin {
        tail + lane
    } else {
        usize::MAX
    };
    let mut track = Track::<E, D>::start(first);
    // Loaded before the vectors, taken after them.
    let last = if tail + lane < end - begin { Some(*base.add(tail + lane)) } else { None };
    if lane < head {
        track.see_element(*base.add(lane), lane);
    }
    // Vectors a lane loads at once: four (39–40 registers, 50 warps a SM) for elements of four
    // bytes or more, two (32, every warp of 8,192 segments resident) for smaller ones, whose
    // vectors take more instructions to see. Each against the build before it (H200): f32
    // segments argmax 48.5 → 45.4 µs with four, 49.2 → 46.8 with two (the longest segments'
    // chains of batches set the end); bf16 29.5 → 27.0 from four to two. 1-byte types follow
    // the halves unmeasured.
    if core::mem::size_of::<E>() <= 2 {
        see_segment_vectors::<E, D, 2>(&mut track, vecs, lane, nvec, head);
    } else {
        see_segment_vectors::<E, D, 4>(&mut track, vecs, lane, nvec, head);
    }
    if let Some(e) = last {
        track.see_element(e, tail + lane);
    }
    let best = warp::reduce::<FurthestTrack<E, D>>(track);
    if lane == 0 {
        out.store(segment, best.resolve_position((head, tail), |k| *base.add(k), |v| load_v4(vecs.add(v))));
    }
}

/// A `segments` lane's vectors `lane`, `lane + 32`, … of the `nvec` at `vecs` (vector v's
/// first element at position `head + v·PER_VEC` of the segment), `BATCH` loads in flight.
#[cfg(target_os = "cuda")]
#[inline(always)]
unsafe fn see_segment_vectors<E: ArgElement, D: Direction<E>, const BATCH: usize>(
    track: &mut Track<E, D>,
    vecs: *const [u32; 4],
    lane: usize,
    nvec: usize,
    head: usize,
) {
    const LANES: usize = WARP_SIZE as usize;
    let mut i = lane;
    while i + (BATCH - 1) * LANES < nvec {
        let mut batch = [[0u32; 4]; BATCH];
        for j in 0..BATCH {
            batch[j] = load_v4(vecs.add(i + j * LANES));
        }
        for j in 0..BATCH {
            track.see(&batch[j], head + (i + j * LANES) * E::PER_VEC);
        }
        i = opaque(i + BATCH * LANES);
    }
    // The lane's vectors of the last, partial batch.
    for j in 0..BATCH - 1 {
        let v = i + j * LANES;
        if v < nvec {
            track.see(&load_v4(vecs.add(v)), head + v * E::PER_VEC);
        }
    }
}

/// `pieces`: each of `rows` rows of n elements (stride lda) in `chunks` interleaved pieces, a
/// group of `lanes` lanes per piece: piece k of row r is item r·chunks + k and takes the row's
/// batches k, k + chunks, … ([`fold_arg_range_piece`]), so a row's pieces in flight read
/// neighbouring memory; each row's pairs picked by its last piece ([`fold_if_last`]). Indices
/// within the row.
#[cfg(target_os = "cuda")]
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn arg_pieces_body<E: ArgElement, O: ArgFold<E, Acc = ValueIndex<E>>>(
    input: *const E,
    rows: usize,
    n: usize,
    lda: usize,
    lanes: u32,
    chunks: u32,
    partials: *mut ValueIndex<E>,
    tickets: *mut u32,
    out: ArgLines<E>,
) {
    let fold = |row: usize, len, piece, lane| {
        fold_arg_range_piece::<E, O, true>(input.add(row * lda), len, piece, lane, lanes as usize)
    };
    walk_pieces::<O, _, _>(rows, n, lanes, chunks, partials, tickets, fold, |row, best| out.store(row, best))
}

/// `rows` of a row per block ([`folds_in_block`]): block b takes rows b, b + grid, …, its warp
/// w piece w of each ([`track_arg_range_piece`], without its prefetch: the `rows` entries keep
/// their registers). The block folds its lanes' tracks (the furthest key, then the first
/// vector: [`FurthestTrack`]), warps by shuffles and then in order, and thread 0 alone reads the
/// winning vector again. Piece 0 holds the elements outside the row's vectors; its warp folds
/// their pairs where the row has any.
#[cfg(target_os = "cuda")]
#[inline(always)]
unsafe fn arg_rows_per_block<E: ArgElement, D: Direction<E>>(
    input: *const E,
    rows: usize,
    n: usize,
    lda: usize,
    out: ArgLines<E>,
) {
    let tid = thread_idx_x();
    let piece = ((tid / WARP_SIZE) as usize, (block_dim_x() / WARP_SIZE) as usize);
    let lane = (tid % WARP_SIZE) as usize;
    let mut row = block_index();
    // The same rows for every thread of the block: each meets the fold's barriers.
    while row < rows {
        let t =
            track_arg_range_piece::<E, ArgOf<E, D>, false>(input.add(row * lda), n, piece, lane, WARP_SIZE as usize);
        let best = block::fold_warps::<FurthestTrack<E, D>>(warp::reduce::<FurthestTrack<E, D>>(t.tracks));
        // The same in every lane of warp 0 (one row): the shuffles stay converged.
        let edges =
            if piece.0 == 0 && t.has_edges { warp::reduce::<ArgOf<E, D>>(t.edges) } else { ArgOf::<E, D>::identity() };
        if tid == 0 {
            out.store(row, ArgOf::<E, D>::combine(edges, best.resolve(t.nvec, t.head, |v| t.vector(v))));
        }
        row += grid_blocks();
    }
}

/// Each column's running best toward `D` is a [`Track`] of its rows (key and first row, the
/// value read back at the end): a key per element, and a compare with the best per four rows.
#[cfg(target_os = "cuda")]
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn arg_cols_body<E: ArgElement, D: Direction<E>>(
    input: *const E,
    rows: usize,
    n: usize,
    lda: usize,
    tile: u32,
    splits: u32,
    width: u32,
    out: ArgLines<E>,
) {
    let fold = |mut t: Track<E, D>, e, r| {
        t.see_element(e, r);
        t
    };
    let fold4 = |mut t: Track<E, D>, e, r, stride| {
        t.see_elements4(e, r, stride);
        t
    };
    // Indices alone (no partials, no values) read no value back.
    let read_back = !out.partials.is_null() || !out.values.is_null();
    let value = |col: usize, r: usize| if read_back { *input.add(r * lda + col) } else { D::START };
    let store = |col: usize, slot, t: Track<E, D>| out.store(slot, t.resolve_element(|r| value(col, r)));
    let store_vector = |col: usize, t: &[Track<E, D>; MAX_COLUMN_WIDTH]| {
        out.store_vector(col, |k| t[k].resolve_element(|r| value(col + k, r)))
    };
    walk_columns(input, rows, n, lda, tile, splits, width, Track::start, fold, fold4, store, store_vector)
}

/// `cols`' arg walk ([`arg_cols_body`]), each column's (value, first row) handed on with
/// `store(c, v)`; its value always read back (the `tiles` folds compare them).
#[cfg(target_os = "cuda")]
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn walk_column_tracks<E: ArgElement, D: Direction<E>, S: Fn(usize, ValueIndex<E>)>(
    input: *const E,
    rows: usize,
    n: usize,
    lda: usize,
    tile: u32,
    splits: u32,
    width: u32,
    store: S,
) {
    let fold = |mut t: Track<E, D>, e, r| {
        t.see_element(e, r);
        t
    };
    let fold4 = |mut t: Track<E, D>, e, r, stride| {
        t.see_elements4(e, r, stride);
        t
    };
    let store = |col: usize, _, t: Track<E, D>| store(col, t.resolve_element(|r| *input.add(r * lda + col)));
    walk_columns(input, rows, n, lda, tile, splits, width, Track::start, fold, fold4, store, |_, _| false)
}

/// `words`: `cols` over a 16-byte vector of columns of halves per thread by their words'
/// extremes ([`walk_column_words`]); each column's row resolves as a [`Track`] at that row would.
#[cfg(target_os = "cuda")]
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn arg_words_body<E: ArgElement, D: Direction<E>>(
    input: *const E,
    rows: usize,
    n: usize,
    lda: usize,
    tile: u32,
    splits: u32,
    out: ArgLines<E>,
) {
    // As `cols`: indices alone read no value back.
    let read_back = !out.partials.is_null() || !out.values.is_null();
    let value = |col: usize, r: usize| if read_back { *input.add(r * lda + col) } else { D::START };
    let store = |col: usize, slot, t: Track<E, D>| out.store(slot, t.resolve_element(|r| value(col, r)));
    let store_vector = |col: usize, t: &[Track<E, D>; MAX_COLUMN_WIDTH]| {
        out.store_vector(col, |k| t[k].resolve_element(|r| value(col + k, r)))
    };
    walk_column_words::<E, D, _, _>(input, rows, n, lda, tile, splits, store, store_vector)
}

#[cfg(target_os = "cuda")]
#[inline(always)]
unsafe fn arg_fold_body<T: Copy, O: ReduceOp<Acc = ValueIndex<T>>>(
    partials: *const ValueIndex<T>,
    items: usize,
    chunks: usize,
    out: ArgLines<T>,
) {
    let load = |item: usize, k: usize| *partials.add(item * chunks + k);
    fold_partials::<O, _, _>(items, chunks, load, |item, v| out.store(item, v))
}

/// The four entry points of arg op `$opname` (operator `$op`) over `$e`.
macro_rules! axis_arg_entries {
    ($e:ident, $opname:ident: $dir:ty) => {
        paste::paste! {
            #[cfg(target_os = "cuda")]
            #[kernel]
            pub unsafe fn [<axis_arg_rows_ $opname _ $e>](
                input: *const $e, rows: usize, n: usize, lda: usize, offsets: *const u64, lanes: u32, chunks: u32,
                partials: *mut ValueIndex<$e>, values: *mut $e, indices: *mut u8, wide: u32,
            ) {
                crate::grid_dependency::wait_for_prerequisite_grids();
                let out = ArgLines { partials, values, indices, wide };
                arg_rows_body::<$e, $dir>(input, rows, n, lda, offsets, lanes, chunks, out)
            }
            #[cfg(target_os = "cuda")]
            #[kernel]
            pub unsafe fn [<axis_arg_segments_ $opname _ $e>](
                input: *const $e, segments: usize, n: usize, offsets: *const u64,
                values: *mut $e, indices: *mut u8, wide: u32,
            ) {
                crate::grid_dependency::wait_for_prerequisite_grids();
                let out = ArgLines { partials: core::ptr::null_mut(), values, indices, wide };
                arg_segments_body::<$e, $dir>(input, segments, n, offsets, out)
            }
            #[cfg(target_os = "cuda")]
            #[kernel]
            pub unsafe fn [<axis_arg_cols_ $opname _ $e>](
                input: *const $e, rows: usize, n: usize, lda: usize, tile: u32, splits: u32, width: u32,
                partials: *mut ValueIndex<$e>, values: *mut $e, indices: *mut u8, wide: u32,
            ) {
                crate::grid_dependency::wait_for_prerequisite_grids();
                let out = ArgLines { partials, values, indices, wide };
                arg_cols_body::<$e, $dir>(input, rows, n, lda, tile, splits, width, out)
            }
            #[cfg(target_os = "cuda")]
            #[kernel]
            pub unsafe fn [<axis_arg_fold_ $opname _ $e>](
                partials: *const ValueIndex<$e>, items: usize, chunks: usize,
                values: *mut $e, indices: *mut u8, wide: u32,
            ) {
                crate::grid_dependency::wait_for_prerequisite_grids();
                let out = ArgLines { partials: core::ptr::null_mut(), values, indices, wide };
                arg_fold_body::<$e, ArgOf<$e, $dir>>(partials, items, chunks, out)
            }
            #[cfg(target_os = "cuda")]
            #[kernel]
            pub unsafe fn [<axis_arg_pieces_ $opname _ $e>](
                input: *const $e, rows: usize, n: usize, lda: usize, _offsets: *const u64, lanes: u32, chunks: u32,
                partials: *mut ValueIndex<$e>, tickets: *mut u32, values: *mut $e, indices: *mut u8, wide: u32,
            ) {
                crate::grid_dependency::wait_for_prerequisite_grids();
                let out = ArgLines { partials: core::ptr::null_mut(), values, indices, wide };
                arg_pieces_body::<$e, ArgOf<$e, $dir>>(input, rows, n, lda, lanes, chunks, partials, tickets, out)
            }
        }
    };
}

/// argmin and argmax entry points for each element type of the axis reductions.
macro_rules! axis_arg {
    ($($t:ident => $sum:ident),* $(,)?) => {
        $(
            axis_arg_entries!($t, argmin: Smallest);
            axis_arg_entries!($t, argmax: Largest);
        )*
    };
}

crate::typed::typed_types!(axis_arg);

/// The `words` entry point of arg op `$opname` (direction `$dir`) over `$e`.
macro_rules! axis_arg_words_entry {
    ($e:ident, $opname:ident: $dir:ty) => {
        paste::paste! {
            #[cfg(target_os = "cuda")]
            #[kernel]
            pub unsafe fn [<axis_arg_words_ $opname _ $e>](
                input: *const $e, rows: usize, n: usize, lda: usize, tile: u32, splits: u32, _width: u32,
                partials: *mut ValueIndex<$e>, values: *mut $e, indices: *mut u8, wide: u32,
            ) {
                crate::grid_dependency::wait_for_prerequisite_grids();
                let out = ArgLines { partials, values, indices, wide };
                arg_words_body::<$e, $dir>(input, rows, n, lda, tile, splits, out)
            }
        }
    };
}

/// The `word_tiles` entry point of arg op `$opname` (direction `$dir`) over `$e`: `tiles`' walk
/// by words, as `words` walks them (`tiles`' arguments, `width` ignored).
macro_rules! axis_arg_word_tiles_entry {
    ($e:ident, $opname:ident: $dir:ty) => {
        paste::paste! {
            #[cfg(target_os = "cuda")]
            #[kernel]
            pub unsafe fn [<axis_arg_word_tiles_ $opname _ $e>](
                input: *const $e, rows: usize, n: usize, lda: usize, tile: u32, splits: u32, _width: u32,
                partials: *mut ValueIndex<$e>, tickets: *mut u32, values: *mut $e, indices: *mut u8, wide: u32,
            ) {
                crate::grid_dependency::wait_for_prerequisite_grids();
                let out = ArgLines { partials: core::ptr::null_mut(), values, indices, wide };
                crate::column_tiles::arg_word_tiles_body::<$e, $dir, _>(
                    input, (rows, n, lda), (tile, splits), partials, tickets, |c, v| out.store(c, v),
                )
            }
        }
    };
}

/// The most rows of a split a `words` thread walks: row offsets from its first row, and those
/// of a batch of four rows (`AXIS_BLOCK` phases apart) started before the end, fit 32 bits.
pub const WORD_SPLIT_MAX_ROWS: usize = u32::MAX as usize - 4 * crate::config::AXIS_BLOCK as usize;

/// The `words` and `word_tiles` entry points, `axis_arg_words_{op}_{type}` and
/// `axis_arg_word_tiles_{op}_{type}`, for each type with two elements a word
/// ([`crate::ops::arg::ArgElement::WORD_LANES`]), and their list.
macro_rules! axis_arg_words {
    ($($t:ident),*) => {
        /// Element types with a `words` entry (column arg tracks by packed extremes,
        /// [`crate::column_tracks`]): `cols`' arguments, `width` ignored (one 16-byte vector of
        /// columns per thread, so `input` and lda·size multiples of 16 bytes), and each split's
        /// rows at most [`WORD_SPLIT_MAX_ROWS`].
        pub const AXIS_ARG_WORD_TYPES: [&str; [$(stringify!($t)),*].len()] = [$(stringify!($t)),*];
        $(
            axis_arg_words_entry!($t, argmin: Smallest);
            axis_arg_words_entry!($t, argmax: Largest);
            axis_arg_word_tiles_entry!($t, argmin: Smallest);
            axis_arg_word_tiles_entry!($t, argmax: Largest);
        )*
    };
}
axis_arg_words!(f16, bf16);

/// The `tiles` entry point of arg op `$opname` (direction `$dir`) over `$e`: the typed ops'
/// `tiles` arguments ([`crate::column_tiles`]), then where results go as `cols` takes them
/// (values or null, indices, wide).
macro_rules! axis_arg_tiles_entry {
    ($e:ident, $opname:ident: $dir:ty) => {
        paste::paste! {
            #[cfg(target_os = "cuda")]
            #[kernel]
            pub unsafe fn [<axis_arg_tiles_ $opname _ $e>](
                input: *const $e, rows: usize, n: usize, lda: usize, tile: u32, splits: u32, width: u32,
                partials: *mut ValueIndex<$e>, tickets: *mut u32, values: *mut $e, indices: *mut u8, wide: u32,
            ) {
                crate::grid_dependency::wait_for_prerequisite_grids();
                let out = ArgLines { partials: core::ptr::null_mut(), values, indices, wide };
                crate::column_tiles::arg_tiles_body::<$e, $dir, _>(
                    input, (rows, n, lda), (tile, splits, width), partials, tickets, |c, v| out.store(c, v),
                )
            }
        }
    };
}

/// The arg `tiles` entry points, `axis_arg_tiles_{op}_{type}`, over the types of
/// [`crate::column_tiles::AXIS_TILE_TYPES`].
macro_rules! axis_arg_tiles {
    ($($t:ident => $sum:ident),* $(,)?) => {
        $(
            axis_arg_tiles_entry!($t, argmin: Smallest);
            axis_arg_tiles_entry!($t, argmax: Largest);
        )*
    };
}
crate::column_tiles::tile_types!(axis_arg_tiles);
