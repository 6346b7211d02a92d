//! Reductions along an axis of a row-major m×n matrix with row stride `lda` (elements), and of
//! segments given by offsets: sum, min, max and minmax per row, column or segment, over the
//! typed reductions' element types ([`crate::typed`]), with the same
//! accumulators and operators.
//!
//! Four kernels per (op, type), `axis_{kernel}_{op}_{type}`:
//! - `rows`: a group of `lanes` lanes (1 to 32) reduces each work item: a row, a chunk of a row
//!   (`chunks` per row) or a segment (`offsets` not null). Result of item i → `out[i]`.
//! - `cols`: each thread walks `width` adjacent columns (1, or a 16-byte vector of them on rows
//!   that start 16-byte aligned) over a range of rows; blocks cover column tiles of `tile`
//!   threads (`tile·width` columns) and `splits` row ranges, each thread every (B / tile)-th row
//!   of its range. Column c's chunk k (= split·(B / tile) + that phase) → `out[c·chunks + k]`.
//! - `fold`: folds each item's `chunks` partials (split columns, and rows of more pieces than
//!   their last piece folds) in a fixed order: a thread per item for up to 32, a warp for up to
//!   four partials a lane, else a block per item ([`fold_lanes`]).
//! - `pieces`: rows split into `chunks` > 1 pieces (`rows`' arguments, `offsets` ignored, then
//!   `partials`, `tickets`, `out`): piece k of a row takes the row's batches of four vectors
//!   per lane k, k + chunks, … ([`fold_range_piece`]), so a row's pieces in flight read
//!   neighbouring memory. Piece k of row r → `partials[r·chunks + k]`, and the row's last piece
//!   to finish folds them in order into `out[r]` ([`fold_if_last`]: a ticket on `tickets[r]`;
//!   null `tickets`: the partials are left to the `fold` launch).
//!   With a warp per piece and a block's warps of pieces ([`folds_in_block`]), a row per block,
//!   its pieces folded there into `out[r]` (`partials` and `tickets` unused).
//!
//! Empty rows, columns and segments get the op's identity: 0, the largest value (+inf) for
//! min, the lowest (-inf) for max. Float results are deterministic: each item's elements go to
//! fixed lanes and fold in a fixed order, whatever the dispatch order of blocks (a function of
//! the shape, the launch parameters and, for columns, `width`).
//!
//! # Safety
//! Launch with `AXIS_BLOCK`-thread blocks (whole warps, `lanes` and `tile` powers of two that
//! divide it); `rows` over segments with any whole warps (`AXIS_SEGMENT_BLOCK`). `rows`:
//! `input` holds (rows − 1)·lda + n elements, or `n` for segments (offsets
//! are clamped to it; a decreasing pair is an empty segment); `offsets` is null or holds
//! rows + 1 offsets; `out` holds rows·chunks accumulators; any grid. `pieces`: likewise without
//! offsets, `out` holds rows accumulators, `partials` rows·chunks and `tickets` rows zeros
//! (left zero) or is null. `cols`: a grid of
//! ⌈n / (tile·width)⌉·splits blocks, `out` holds splits·(AXIS_BLOCK / tile)·n accumulators;
//! `width` is 1, or `PER_VEC` when `input` and lda·size are multiples of 16 bytes. `fold`:
//! `partials` holds item i's chunk k at i·item_stride + k·chunk_stride, `out` holds `items`
//! accumulators; any grid.
//!
//! # Thread mapping
//! `rows`: item `block·(B / lanes) + tid / lanes` (plus multiples of the grid's groups) to the
//! group of lanes `tid / lanes`; its 16-byte vector j to lane j mod lanes ([`fold_range`]). With
//! one lane and whole rows, row `block·B + tid` (plus multiples of the grid's threads) to the
//! thread, element by element; rows of one element stored contiguously (n = lda = 1) likewise,
//! four rows in flight per thread ([`for_thread_elements`]).
//! `pieces`: as `rows`' groups, piece k of row r being item r·chunks + k; within it, vector j of
//! each of its batches to lane j mod lanes. A row per block: row `block` (plus multiples of the
//! grid) to the block, piece w to warp w.
//! `cols`: thread `tid` of block `split·tiles + t` owns the `width` columns from
//! `(t·tile + tid mod tile)·width` and rows `r0 + tid / tile + j·(B / tile)` of its split.
//! `fold`: chunk k of an item to lane k mod lanes of its group, or to thread k mod B.
#[cfg(target_os = "cuda")]
use crate::{
    block,
    config::{MinMax as Pair, WARP_SIZE},
    ops::{Element, Fold, Max, Min, MinMax, ReduceOp, Sum},
    piece_fold::walk_pieces,
    thread::{
        block_index, fold_range, fold_range_piece, fold_strided, grid_blocks, grid_position, issue_loads_together,
        load_v4, pack_v4, store_v4,
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

/// Rows per thread the host's grid gives the `rows` kernel on one-element rows stored
/// contiguously (n = lda = 1): [`for_thread_elements`]'s four loads in flight.
pub const ROWS_PER_THREAD: usize = 4;

/// The axis kernels; entry points are `axis_{kernel}_{op}_{type}` over `TYPED_OPS` and
/// [`AXIS_TYPES`]. `pieces` is an entry of its own so that the `rows` kernels keep their
/// registers (32 for most: eight blocks per SM).
pub const AXIS_KERNELS: [&str; 4] = ["rows", "cols", "fold", "pieces"];

/// Whether `pieces` with `lanes` lanes and `chunks` pieces per row gives each row a whole
/// `AXIS_BLOCK` block, a warp per piece, folded in the block in warp order into the row's
/// result (no partials, no `fold` launch).
pub const fn folds_in_block(lanes: u32, chunks: u32) -> bool {
    lanes == crate::config::WARP_SIZE && chunks == crate::config::AXIS_BLOCK / crate::config::WARP_SIZE
}

/// Lanes of the `fold` kernels per item of `chunks` partials: one thread for up to
/// `THREAD_FOLD_PARTIALS` (its loads eight in flight, no shuffles), a warp for up to
/// `WARP_FOLD_PARTIALS` (a lane takes at most four), else the whole block (many partials, few
/// items).
pub const fn fold_lanes(chunks: usize) -> u32 {
    if chunks <= THREAD_FOLD_PARTIALS {
        1
    } else if chunks <= WARP_FOLD_PARTIALS {
        WARP_LANES as u32
    } else {
        crate::config::AXIS_BLOCK
    }
}

/// A warp's lanes, as `fold_lanes` compares them.
const WARP_LANES: usize = crate::config::WARP_SIZE as usize;
/// Most partials a thread folds alone for one item: four batches of eight loads. A group of
/// lanes per item instead spent most of the fold's time in its shuffle tree (8192 × 28,672 bf16
/// columns, 18 splits: 23.5 µs for 2 MiB of partials, Nsight Compute).
const THREAD_FOLD_PARTIALS: usize = WARP_LANES;
/// Most partials a warp folds for one item: four per lane, each lane's loads a short chain.
const WARP_FOLD_PARTIALS: usize = 4 * WARP_LANES;

/// Folds each of `items` items' `chunks` partials (`load(item, k)`) in a group of `lanes` =
/// [`fold_lanes`]`(chunks)` lanes, partial k to lane k mod lanes, in a fixed order, and stores
/// the result with `store(item, v)`. Any grid: groups stride over the items.
#[cfg(target_os = "cuda")]
#[inline(always)]
pub(crate) unsafe fn fold_in_groups<O: ReduceOp, L: Fn(usize, usize) -> O::Acc, S: Fn(usize, O::Acc)>(
    items: usize,
    chunks: usize,
    lanes: u32,
    load: L,
    store: S,
) {
    let tid = thread_idx_x();
    let (group, lane) = ((tid / lanes) as usize, (tid % lanes) as usize);
    let per_block = (block_dim_x() / lanes) as usize;
    // The warp's first group: the loop runs while it has work, so every lane of a warp takes
    // the same turns and meets the same shuffles.
    let warp_first = (tid / WARP_SIZE * WARP_SIZE / lanes) as usize;
    let step = grid_blocks() * per_block;
    let mut first = block_index() * per_block;
    while first + warp_first < items {
        let item = first + group;
        // Partials lane, lane + lanes, … in order.
        let v = if item < items {
            fold_strided::<O, _>(lane, lanes as usize, chunks, |k| load(item, k))
        } else {
            O::identity()
        };
        let v = warp::group_reduce::<O>(v, lanes);
        if lane == 0 && item < items {
            store(item, v);
        }
        first += step;
    }
}

/// Calls `each(row)` for every row of `rows` this thread owns: a thread per row, for rows of at
/// most one 16-byte vector (one lane each: `lanes` = 1, whole rows), which a group's loop and
/// vector split would bound. Any grid.
#[cfg(target_os = "cuda")]
#[inline(always)]
pub(crate) unsafe fn for_thread_rows(rows: usize, mut each: impl FnMut(usize)) {
    let stride = grid_blocks() * block_dim_x() as usize;
    let mut row = block_index() * block_dim_x() as usize + thread_idx_x() as usize;
    while row < rows {
        each(row);
        row += stride;
    }
}

/// Calls `each(row, element)` for every row this thread owns of `rows` one-element rows stored
/// contiguously (n = lda = 1): rows `gid + j·T` of the grid's T threads, as a thread per row
/// does (adjacent threads load and store adjacent rows), four loads in flight at a time.
/// Any grid; [`ROWS_PER_THREAD`] rows per thread keep the four loads busy.
#[cfg(target_os = "cuda")]
#[inline(always)]
pub(crate) unsafe fn for_thread_elements<E: Copy>(input: *const E, rows: usize, mut each: impl FnMut(usize, E)) {
    let (mut row, stride) = grid_position();
    while row + 3 * stride < rows {
        let e = [*input.add(row), *input.add(row + stride), *input.add(row + 2 * stride), *input.add(row + 3 * stride)];
        each(row, e[0]);
        each(row + stride, e[1]);
        each(row + 2 * stride, e[2]);
        each(row + 3 * stride, e[3]);
        row += 4 * stride;
    }
    while row < rows {
        each(row, *input.add(row));
        row += stride;
    }
}

/// [`for_thread_elements`] a 16-byte vector of rows at a time, where each row's result `one(e)`
/// is an element's size: `out[row] = one(input[row])`, vector `gid + j·T` of the input to the
/// thread and its results out as one 16-byte vector, four loads in flight; the rows past the
/// last whole vector a thread each. `input` and `out` 16-byte aligned; any grid of at least
/// `E::PER_VEC` threads. Its loop is [`for_thread_elements`]'s, written out: sharing one through a
/// load closure took `axis_arg_rows_argmax_bf16` from 42 to 50 registers.
#[cfg(target_os = "cuda")]
#[inline(always)]
pub(crate) unsafe fn for_thread_vectors<E: Element, A: Copy>(
    input: *const E,
    rows: usize,
    out: *mut A,
    one: impl Fn(E) -> A,
) {
    let (src, dst) = (input as *const [u32; 4], out as *mut [u32; 4]);
    // SAFETY (of the copy): `A` is `E`'s size (the caller's condition).
    let put = |i: usize, w: [u32; 4]| {
        store_v4(dst.add(i), pack_v4(|k| core::mem::transmute_copy::<A, E>(&one(E::lane(&w, k)))))
    };
    let nvec = rows / E::PER_VEC;
    let (gid, stride) = grid_position();
    let mut v = gid;
    while v + 3 * stride < nvec {
        let w = [
            load_v4(src.add(v)),
            load_v4(src.add(v + stride)),
            load_v4(src.add(v + 2 * stride)),
            load_v4(src.add(v + 3 * stride)),
        ];
        put(v, w[0]);
        put(v + stride, w[1]);
        put(v + 2 * stride, w[2]);
        put(v + 3 * stride, w[3]);
        v += 4 * stride;
    }
    while v < nvec {
        put(v, load_v4(src.add(v)));
        v += stride;
    }
    let row = nvec * E::PER_VEC + gid;
    if row < rows {
        *out.add(row) = one(*input.add(row));
    }
}

/// Whether the `rows` kernel of a typed op whose accumulator is `acc_bytes` wide reads contiguous
/// one-element rows of `elem`-byte elements a 16-byte vector at a time ([`for_thread_vectors`]):
/// results the elements' size (min and max, and sums of types that accumulate in themselves),
/// the input and the results 16-byte aligned. The host sizes the grid by it.
pub const fn rows_by_vectors(elem: usize, acc_bytes: usize, input: u64, out: u64) -> bool {
    acc_bytes == elem && elem < crate::config::VECTOR_BYTES && (input | out) % crate::config::VECTOR_BYTES as u64 == 0
}

/// Item `item`'s element range in the input: segment `item`, or chunk `item mod chunks` of row
/// `item / chunks` (chunks of whole 4-vector batches from the row's start).
#[cfg(target_os = "cuda")]
#[inline(always)]
pub(crate) unsafe fn item_range(
    item: usize,
    n: usize,
    lda: usize,
    offsets: *const u64,
    chunks: usize,
    per_vec: usize,
) -> (usize, usize) {
    if !offsets.is_null() {
        // Clamped to the input (`n` elements): a bad offset reads nothing outside it.
        let begin = core::cmp::min(*offsets.add(item) as usize, n);
        let end = core::cmp::min(*offsets.add(item + 1) as usize, n);
        return (begin, core::cmp::max(begin, end));
    }
    if chunks == 1 {
        // Whole rows: no 64-bit divisions, which would bound rows of a few elements.
        return (item * lda, item * lda + n);
    }
    let (row, chunk) = (item / chunks, item % chunks);
    let batch = 4 * per_vec;
    let per = (n + chunks - 1) / chunks;
    let per = (per + batch - 1) / batch * batch;
    let begin = core::cmp::min(chunk * per, n);
    let end = core::cmp::min(begin + per, n);
    (row * lda + begin, row * lda + end)
}

#[cfg(target_os = "cuda")]
#[inline(always)]
unsafe fn rows_body<E: Element, O: Fold<E>>(
    input: *const E,
    rows: usize,
    n: usize,
    lda: usize,
    offsets: *const u64,
    lanes: u32,
    chunks: u32,
    out: *mut O::Acc,
) {
    if lanes == 1 && chunks == 1 && offsets.is_null() {
        if n == 1 && lda == 1 {
            let one = |e| O::fold(O::identity(), e);
            let (elem, acc) = (core::mem::size_of::<E>(), core::mem::size_of::<O::Acc>());
            if rows_by_vectors(elem, acc, input as u64, out as u64) {
                return for_thread_vectors(input, rows, out, one);
            }
            return for_thread_elements(input, rows, |row, e| *out.add(row) = one(e));
        }
        return for_thread_rows(rows, |row| {
            let p = input.add(row * lda);
            let mut acc = O::identity();
            for k in 0..n {
                acc = O::fold(acc, *p.add(k));
            }
            *out.add(row) = acc;
        });
    }
    let tid = thread_idx_x();
    let (group, lane) = ((tid / lanes) as usize, (tid % lanes) as usize);
    let per_block = (block_dim_x() / lanes) as usize;
    let items = rows * chunks as usize;
    // The warp's first group: the loop runs while it has work, so every lane of a warp takes
    // the same turns and meets the same shuffles.
    let warp_first = (tid / WARP_SIZE * WARP_SIZE / lanes) as usize;
    let step = grid_blocks() * per_block;
    let mut first = block_index() * per_block;
    while first + warp_first < items {
        let item = first + group;
        let (begin, end) =
            if item < items { item_range(item, n, lda, offsets, chunks as usize, E::PER_VEC) } else { (0, 0) };
        let v = warp::group_reduce::<O>(fold_range::<E, O>(input.add(begin), end - begin, lane, lanes as usize), lanes);
        if lane == 0 && item < items {
            *out.add(item) = v;
        }
        first += step;
    }
}

/// `pieces`: each of `rows` rows of n elements (stride lda) in `chunks` interleaved pieces, a
/// group of `lanes` lanes per piece, each row folded by its last piece (with `tickets`).
#[cfg(target_os = "cuda")]
#[inline(always)]
unsafe fn pieces_body<E: Element, O: Fold<E>>(
    input: *const E,
    rows: usize,
    n: usize,
    lda: usize,
    lanes: u32,
    chunks: u32,
    partials: *mut O::Acc,
    tickets: *mut u32,
    out: *mut O::Acc,
) {
    if folds_in_block(lanes, chunks) && block_dim_x() / lanes == chunks {
        return pieces_per_block::<E, O>(input, rows, n, lda, out);
    }
    let fold = |row: usize, len, piece, lane| {
        fold_range_piece::<E, O, true>(input.add(row * lda), len, piece, lane, lanes as usize)
    };
    walk_pieces::<O, _, _>(rows, n, lanes, chunks, partials, tickets, fold, |row, total| *out.add(row) = total)
}

/// `pieces` of a row per block ([`folds_in_block`]): block b takes rows b, b + grid, …, its
/// warp w piece w of each; the block folds its warps' pieces in order into `out[row]`.
#[cfg(target_os = "cuda")]
#[inline(always)]
unsafe fn pieces_per_block<E: Element, O: Fold<E>>(
    input: *const E,
    rows: usize,
    n: usize,
    lda: usize,
    out: *mut O::Acc,
) {
    let tid = thread_idx_x();
    let piece = ((tid / WARP_SIZE) as usize, (block_dim_x() / WARP_SIZE) as usize);
    let mut row = block_index();
    // The same rows for every thread of the block: each meets the fold's barriers.
    while row < rows {
        let v = fold_range_piece::<E, O, true>(
            input.add(row * lda),
            n,
            piece,
            (tid % WARP_SIZE) as usize,
            WARP_SIZE as usize,
        );
        let v = block::fold_warps::<O>(warp::reduce::<O>(v));
        if tid == 0 {
            *out.add(row) = v;
        }
        row += grid_blocks();
    }
}

/// Most columns a thread of a `cols` launch owns: one 16-byte vector of bytes.
pub const MAX_COLUMN_WIDTH: usize = 16;

/// A thread's part of a `cols` launch (see the thread mapping): its first column, its rows
/// `first, first + phases, …` below `end`, and the slots of its columns' results. The same
/// arithmetic as [`walk_columns`]' own, which keeps it inline: the `cols` kernels' registers
/// grew with this struct in their walk (bf16 argmax 107 → 127).
#[cfg(target_os = "cuda")]
#[derive(Clone, Copy)]
pub(crate) struct ColumnPart {
    pub col: usize,
    pub first: usize,
    pub end: usize,
    pub phases: usize,
    /// Results per column: splits · phases.
    chunks: usize,
    /// This thread's chunk of each of its columns: split · phases + phase.
    chunk: usize,
}

#[cfg(target_os = "cuda")]
impl ColumnPart {
    /// This thread's part of a launch over `rows` × `n` with column tiles of `tile` threads,
    /// `splits` row ranges and `width` columns a thread; None past the last column.
    #[inline(always)]
    pub(crate) fn of_thread(rows: usize, n: usize, tile: u32, splits: u32, width: u32) -> Option<ColumnPart> {
        let (tid, tile, width) = (thread_idx_x() as usize, tile as usize, width as usize);
        let phases = block_dim_x() as usize / tile;
        let tiles = (n + tile * width - 1) / (tile * width);
        let (col_tile, split) = (block_index() % tiles, block_index() / tiles);
        let (col, phase) = ((col_tile * tile + tid % tile) * width, tid / tile);
        if col >= n {
            return None;
        }
        let per = (rows + splits as usize - 1) / splits as usize;
        let r0 = core::cmp::min(split * per, rows);
        let end = core::cmp::min(r0 + per, rows);
        let chunks = splits as usize * phases;
        Some(ColumnPart { col, first: r0 + phase, end, phases, chunks, chunk: split * phases + phase })
    }

    /// Where column `c`'s result from this thread goes: `c·chunks + split·phases + phase`.
    #[inline(always)]
    pub(crate) fn slot(&self, c: usize) -> usize {
        c * self.chunks + self.chunk
    }

    /// Whether column c's slot is c: one split of one phase.
    #[inline(always)]
    pub(crate) fn slot_is_column(&self) -> bool {
        self.chunks == 1
    }
}

/// This thread's part of a `cols` launch of `width` columns per thread (1, or `E::PER_VEC`: one
/// 16-byte vector per row): its columns and rows (see the thread mapping), each column's
/// accumulator started by `start(first row)` (`usize::MAX` when the thread has no rows) and
/// folded in row order, eight loads in flight ([`walk_rows`]): four rows at a time with
/// `fold4(acc, elements, row, stride)` (the elements of rows `row + j·stride`), the rest with
/// `fold(acc, element, row)`. Hands column `c`'s result on with `store(c, slot, acc)`, slot
/// `c·chunks + split·phases + phase`, or a whole vector's results in slots from `col` at once
/// with `store_vector(col, accs)` where that returns true.
#[cfg(target_os = "cuda")]
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn walk_columns<E: Element, A: Copy>(
    input: *const E,
    rows: usize,
    n: usize,
    lda: usize,
    tile: u32,
    splits: u32,
    width: u32,
    start: impl Fn(usize) -> A,
    fold: impl Fn(A, E, usize) -> A,
    fold4: impl Fn(A, [E; 4], usize, usize) -> A,
    store: impl Fn(usize, usize, A),
    store_vector: impl Fn(usize, &[A; MAX_COLUMN_WIDTH]) -> bool,
) {
    let (tid, tile, width) = (thread_idx_x() as usize, tile as usize, width as usize);
    let phases = block_dim_x() as usize / tile;
    let tiles = (n + tile * width - 1) / (tile * width);
    let (col_tile, split) = (block_index() % tiles, block_index() / tiles);
    let (col, phase) = ((col_tile * tile + tid % tile) * width, tid / tile);
    if col >= n {
        return;
    }
    let per = (rows + splits as usize - 1) / splits as usize;
    let r0 = core::cmp::min(split * per, rows);
    let r1 = core::cmp::min(r0 + per, rows);
    let chunks = splits as usize * phases;
    let slot = |c: usize| c * chunks + split * phases + phase;
    let p = input.add(col);
    let mut r = r0 + phase;
    let identity = start(if r < r1 { r } else { usize::MAX });
    if width == 1 {
        let mut acc = identity;
        let take = |v: [E; 4], four: bool, r: usize| {
            acc = if four { fold4(acc, v, r, phases) } else { fold(acc, v[0], r) };
        };
        walk_rows(r, r1, phases, |r| *p.add(r * lda), take);
        return store(col, slot(col), acc);
    }
    // One accumulator per column of the vector, indexed by constants only (registers).
    let mut acc = [identity; MAX_COLUMN_WIDTH];
    let row = |r: usize| load_v4(p.add(r * lda) as *const [u32; 4]);
    let keep = |k: usize| col + k < n;
    // Column k of the rows' vectors `v` (four rows, or `v[0]` alone), for every k (`whole`)
    // or those in the matrix.
    let mut take = |v: [[u32; 4]; 4], four: bool, r: usize, whole: bool| {
        for k in 0..E::PER_VEC {
            if whole || keep(k) {
                acc[k] = if four {
                    let e = [E::lane(&v[0], k), E::lane(&v[1], k), E::lane(&v[2], k), E::lane(&v[3], k)];
                    fold4(acc[k], e, r, phases)
                } else {
                    fold(acc[k], E::lane(&v[0], k), r)
                };
            }
        }
    };
    if col + E::PER_VEC <= n {
        walk_rows(r, r1, phases, row, |v, four, r| take(v, four, r, true));
    } else {
        // A partial last vector: its whole vector is in the input (in the row padding, as
        // lda ≥ PER_VEC) on every row but the last, which is read one element at a time.
        let last = rows.saturating_sub(1);
        r = walk_rows(r, core::cmp::min(r1, last), phases, row, |v, four, r| take(v, four, r, false));
        if r == last && r < r1 {
            for k in 0..E::PER_VEC {
                if keep(k) {
                    acc[k] = fold(acc[k], *p.add(r * lda + k), r);
                }
            }
        }
    }
    // One split of one phase: column c's slot is c.
    if chunks == 1 && col + E::PER_VEC <= n && store_vector(col, &acc) {
        return;
    }
    for k in 0..E::PER_VEC {
        if keep(k) {
            store(col + k, slot(col + k), acc[k]);
        }
    }
}

/// Hands rows `r, r + phases, …` below `end` on in order, `row` loading one row's element or
/// vector: eight rows' loads in flight together, handed on four at a time as
/// `take([rows r + j·phases], true, r)`, then four once more if there are, then each left as
/// `take([row(r); 4], false, r)` (only `[0]` counts). Returns the first row left. (Eight
/// rather than four: column max and argmax 4–10% faster, sums unchanged; tuning log.)
#[cfg(target_os = "cuda")]
#[inline(always)]
pub(crate) unsafe fn walk_rows<L: Copy>(
    mut r: usize,
    end: usize,
    phases: usize,
    row: impl Fn(usize) -> L,
    mut take: impl FnMut([L; 4], bool, usize),
) -> usize {
    while r + 7 * phases < end {
        let near = [row(r), row(r + phases), row(r + 2 * phases), row(r + 3 * phases)];
        let far = [row(r + 4 * phases), row(r + 5 * phases), row(r + 6 * phases), row(r + 7 * phases)];
        // All eight out before the first fold waits: ptxas issued three or four of them.
        issue_loads_together();
        take(near, true, r);
        take(far, true, r + 4 * phases);
        r += 8 * phases;
    }
    if r + 3 * phases < end {
        take([row(r), row(r + phases), row(r + 2 * phases), row(r + 3 * phases)], true, r);
        r += 4 * phases;
    }
    while r < end {
        let v = row(r);
        take([v, v, v, v], false, r);
        r += phases;
    }
    r
}

#[cfg(target_os = "cuda")]
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn cols_body<E: Element, O: Fold<E>>(
    input: *const E,
    rows: usize,
    n: usize,
    lda: usize,
    tile: u32,
    splits: u32,
    width: u32,
    out: *mut O::Acc,
) {
    let fold = |acc, e, _| O::fold(acc, e);
    // In row order, as one at a time.
    let fold4 = |acc, e: [E; 4], _, _| O::fold(O::fold(O::fold(O::fold(acc, e[0]), e[1]), e[2]), e[3]);
    let store = |_, slot, acc| *out.add(slot) = acc;
    walk_columns(input, rows, n, lda, tile, splits, width, |_| O::identity(), fold, fold4, store, |_, _| false)
}

/// [`walk_columns`] folding each column's elements into `O`'s accumulator in row order (as
/// `cols_body` does), handed on with `store(c, slot, acc)`.
#[cfg(target_os = "cuda")]
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn walk_column_values<E: Element, O: Fold<E>, S: Fn(usize, usize, O::Acc)>(
    input: *const E,
    rows: usize,
    n: usize,
    lda: usize,
    tile: u32,
    splits: u32,
    width: u32,
    store: S,
) {
    let fold = |acc, e, _| O::fold(acc, e);
    let fold4 = |acc, e: [E; 4], _, _| O::fold(O::fold(O::fold(O::fold(acc, e[0]), e[1]), e[2]), e[3]);
    walk_columns(input, rows, n, lda, tile, splits, width, |_| O::identity(), fold, fold4, store, |_, _| false)
}

/// Folds each of `items` items' `chunks` partials (`load(item, k)`) and stores the result with
/// `store(item, v)`, in a fixed order: a group of [`fold_lanes`] lanes per item
/// ([`fold_in_groups`]), or for more partials a block per item, chunk k to thread k mod B (four
/// loads in flight), then the block's reduction. Any grid.
#[cfg(target_os = "cuda")]
#[inline(always)]
pub(crate) unsafe fn fold_partials<O: ReduceOp, L: Fn(usize, usize) -> O::Acc, S: Fn(usize, O::Acc)>(
    items: usize,
    chunks: usize,
    load: L,
    store: S,
) {
    let lanes = fold_lanes(chunks);
    if lanes < block_dim_x() {
        return fold_in_groups::<O, _, _>(items, chunks, lanes, load, store);
    }
    let (tid, step) = (thread_idx_x() as usize, block_dim_x() as usize);
    let mut item = block_index();
    while item < items {
        let mut acc = O::identity();
        let mut k = tid;
        while k + 3 * step < chunks {
            let v = [load(item, k), load(item, k + step), load(item, k + 2 * step), load(item, k + 3 * step)];
            for j in 0..4 {
                acc = O::combine(acc, v[j]);
            }
            k += 4 * step;
        }
        while k < chunks {
            acc = O::combine(acc, load(item, k));
            k += step;
        }
        let v = block::reduce::<O>(acc);
        if tid == 0 {
            store(item, v);
        }
        item += grid_blocks();
    }
}

#[cfg(target_os = "cuda")]
#[inline(always)]
unsafe fn fold_body<O: ReduceOp>(
    partials: *const O::Acc,
    items: usize,
    chunks: usize,
    item_stride: usize,
    chunk_stride: usize,
    out: *mut O::Acc,
) {
    let load = |item: usize, k: usize| *partials.add(item * item_stride + k * chunk_stride);
    fold_partials::<O, _, _>(items, chunks, load, |item, v| *out.add(item) = v)
}

/// The four entry points of op `$op` (named `$opname`) over `$e`, accumulating in `$acc`.
macro_rules! axis_entries {
    ($e:ident, $opname:ident: $op:ty, $acc:ty) => {
        paste::paste! {
            #[cfg(target_os = "cuda")]
            #[kernel]
            pub unsafe fn [<axis_rows_ $opname _ $e>](
                input: *const $e, rows: usize, n: usize, lda: usize, offsets: *const u64, lanes: u32, chunks: u32,
                out: *mut $acc,
            ) {
                crate::grid_dependency::wait_for_prerequisite_grids();
                rows_body::<$e, $op>(input, rows, n, lda, offsets, lanes, chunks, out)
            }
            #[cfg(target_os = "cuda")]
            #[kernel]
            pub unsafe fn [<axis_cols_ $opname _ $e>](
                input: *const $e, rows: usize, n: usize, lda: usize, tile: u32, splits: u32, width: u32,
                out: *mut $acc,
            ) {
                crate::grid_dependency::wait_for_prerequisite_grids();
                cols_body::<$e, $op>(input, rows, n, lda, tile, splits, width, out)
            }
            #[cfg(target_os = "cuda")]
            #[kernel]
            pub unsafe fn [<axis_fold_ $opname _ $e>](
                partials: *const $acc, items: usize, chunks: usize, item_stride: usize, chunk_stride: usize,
                out: *mut $acc,
            ) {
                crate::grid_dependency::wait_for_prerequisite_grids();
                fold_body::<$op>(partials, items, chunks, item_stride, chunk_stride, out)
            }
            #[cfg(target_os = "cuda")]
            #[kernel]
            pub unsafe fn [<axis_pieces_ $opname _ $e>](
                input: *const $e, rows: usize, n: usize, lda: usize, _offsets: *const u64, lanes: u32, chunks: u32,
                partials: *mut $acc, tickets: *mut u32, out: *mut $acc,
            ) {
                crate::grid_dependency::wait_for_prerequisite_grids();
                pieces_body::<$e, $op>(input, rows, n, lda, lanes, chunks, partials, tickets, out)
            }
        }
    };
}

/// Every op's entry points for each element type, and the list of types the host reads.
macro_rules! axis {
    ($($t:ident => $sum:ident),* $(,)?) => {
        /// Element types of the axis reductions.
        pub const AXIS_TYPES: [&str; [$(stringify!($t)),*].len()] = [$(stringify!($t)),*];
        $(
            axis_entries!($t, sum: Sum<$sum>, $sum);
            axis_entries!($t, min: Min<$t>, $t);
            axis_entries!($t, max: Max<$t>, $t);
            axis_entries!($t, minmax: MinMax<$t>, Pair<$t>);
        )*
    };
}

crate::typed::typed_types!(axis);
