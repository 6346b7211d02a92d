//! Column reductions folded inside their launch: `axis_tiles_{op}_{type}` (the typed ops),
//! `axis_arg_tiles_{op}_{type}` and `axis_arg_word_tiles_{op}_{type}` (argmin and argmax, the
//! latter by the `words` walk). Each walks as `cols` does, then each block folds its phases (the
//! rows its threads took in turn) through shared memory into one partial per column, and the
//! last block of each column tile to finish (a ticket on the tile's counter, [`last_of_tile`])
//! folds the tile's splits into the results: no `fold` launch, and splits·n partials instead of
//! splits·phases·n. The fold order is fixed for a launch's shape (see the thread mapping), so
//! results are deterministic.
//!
//! The host narrows the tiles (`folded_columns`) so that many tiles share the final folds and
//! each thread of a last block folds a few partials.
//!
//! # Safety
//! `cols`' launch ([`crate::axis`]): `AXIS_BLOCK`-thread blocks, a grid of
//! ⌈n / (tile·width)⌉·splits blocks, `width` 1 or `PER_VEC` on 16-byte aligned rows (always
//! `PER_VEC` for `word_tiles`, whose splits hold at most `WORD_SPLIT_MAX_ROWS` rows). With
//! `splits` > 1, `partials` holds splits·n accumulators (or (value, index) pairs) and `tickets`
//! ⌈n / (tile·width)⌉ zeros (left zero); the outputs hold n results.
//!
//! # Thread mapping
//! The walk: `cols`' ([`crate::axis`]), or `words`' ([`crate::column_tracks`]). The folds: column
//! c of the tile to the group of [`tile_lanes`] lanes `c mod groups`, lane j of it folding phases
//! (then splits) j, j + lanes, … in order, then the group's shuffle tree. The splits of (value,
//! index) pairs in tiles narrower than the block: thread t first folds column t mod columns of
//! every (B / columns)-th split from ⌊t / columns⌋ ([`fold_split_rows`]), then those rounds fold
//! as the phases do.
#[cfg(target_os = "cuda")]
use crate::{
    axis::walk_column_values,
    axis_arg::walk_column_tracks,
    block::sync_threads,
    column_tracks::walk_column_words,
    config::{MinMax as Pair, ValueIndex, WARP_SIZE},
    ops::arg::{ArgElement, ArgOf, Direction, Track},
    ops::{Element, Fold, Max, Min, MinMax, ReduceOp, Sum},
    sgemv::tile_fold::last_of_tile,
    shared::shared_array,
    thread::{block_index, fold_strided},
    warp,
};
#[cfg(target_os = "cuda")]
use core::{mem::size_of, ptr::read_volatile};
#[cfg(target_os = "cuda")]
use cuda_std::{
    prelude::*,
    thread::{block_dim_x, thread_idx_x},
};
#[cfg(target_os = "cuda")]
use half::{bf16, f16};

/// Accumulators of up to 8 bytes a block stages (twice as many words for the arg ops' 16-byte
/// (value, index) pairs): one per (phase, column) of its tile, `AXIS_BLOCK` threads of up to
/// eight columns (a 16-byte vector of halves).
pub const TILE_STAGE: usize = crate::config::AXIS_BLOCK as usize * 8;

/// Lanes per column in a block's folds over a tile of `columns` columns (a power of two): the
/// block's threads over them, at most a warp (a group's shuffles stay in its warp).
#[cfg(target_os = "cuda")]
#[inline(always)]
fn tile_lanes(columns: usize) -> u32 {
    (block_dim_x() as usize / columns).clamp(1, WARP_SIZE as usize) as u32
}

/// Folds `columns` columns of `count` values each (`load(c, k)`) in the block, storing column
/// c's result with `store(c, v)`: a group of `lanes` lanes (a power of two ≤ 32) per column,
/// lane j folding values j, j + lanes, … ([`fold_strided`]), then the group's
/// shuffle tree. Every thread calls it. (`axis::fold_in_groups` over one block; apart so that
/// the `fold` kernels keep their code.)
#[cfg(target_os = "cuda")]
#[inline(always)]
unsafe fn fold_in_block<O: ReduceOp, L: Fn(usize, usize) -> O::Acc, S: Fn(usize, O::Acc)>(
    lanes: u32,
    columns: usize,
    count: usize,
    load: L,
    store: S,
) {
    let tid = thread_idx_x();
    let (group, lane) = ((tid / lanes) as usize, (tid % lanes) as usize);
    let groups = (block_dim_x() / lanes) as usize;
    // The warp's first group: every lane of a warp takes the same turns and shuffles.
    let warp_first = (tid / WARP_SIZE * WARP_SIZE / lanes) as usize;
    let mut first = 0;
    while first + warp_first < columns {
        let c = first + group;
        let v =
            if c < columns { fold_strided::<O, _>(lane, lanes as usize, count, |k| load(c, k)) } else { O::identity() };
        let v = warp::group_reduce::<O>(v, lanes);
        if lane == 0 && c < columns {
            store(c, v);
        }
        first += groups;
    }
}

/// A block's part of a `tiles` launch: its tile of `columns` = tile·width columns from `c0`
/// (tile `col_tile`), its split, its phases (`phases` = B / tile) and this thread's `phase`.
#[cfg(target_os = "cuda")]
#[derive(Clone, Copy)]
struct Tile {
    columns: usize,
    phases: usize,
    phase: usize,
    col_tile: usize,
    split: usize,
    c0: usize,
}

#[cfg(target_os = "cuda")]
impl Tile {
    #[inline(always)]
    fn of_block(n: usize, tile: u32, width: u32) -> Tile {
        let columns = (tile * width) as usize;
        let tiles = (n + columns - 1) / columns;
        let (col_tile, split) = (block_index() % tiles, block_index() / tiles);
        let (phases, phase) = ((block_dim_x() / tile) as usize, (thread_idx_x() / tile) as usize);
        Tile { columns, phases, phase, col_tile, split, c0: col_tile * columns }
    }

    /// Where this thread stages column `c`'s accumulator: its phase's row of the stage.
    #[inline(always)]
    fn slot(&self, c: usize) -> usize {
        self.phase * self.columns + (c - self.c0)
    }

    /// After every thread has staged its columns: folds each column's phases, then (with more
    /// than one split) stores them as this split's partials (`partials[split·n + c]`), and the
    /// tile's last block folds every split's (by whole rows of partials for pairs,
    /// [`ROW_FOLD_MIN_BYTES`]); `store(c, v)` takes column c's result. Every thread calls it.
    #[inline(always)]
    unsafe fn fold<O: ReduceOp, S: Fn(usize, O::Acc)>(
        &self,
        stage: *mut O::Acc,
        (n, splits): (usize, u32),
        partials: *mut O::Acc,
        tickets: *mut u32,
        store: S,
    ) {
        sync_threads();
        // The tile's columns in the matrix (the last tile may hold fewer).
        let (columns, c0) = (self.columns, self.c0);
        let here = core::cmp::min(columns, n - c0);
        let staged = |c: usize, k: usize| *stage.add(k * columns + c);
        let lanes = tile_lanes(columns);
        if splits == 1 {
            return fold_in_block::<O, _, _>(lanes, here, self.phases, staged, |c, v| store(c0 + c, v));
        }
        let mine = partials.add(self.split * n + c0);
        fold_in_block::<O, _, _>(lanes, here, self.phases, staged, |c, v| O::put_partial(mine.add(c), v));
        if last_of_tile(tickets.add(self.col_tile), splits) {
            let split_partial = |c: usize, k: usize| read_volatile(partials.add(k * n + c0 + c));
            if size_of::<O::Acc>() >= ROW_FOLD_MIN_BYTES && lanes > 1 {
                let rounds = fold_split_rows::<O, _>(stage, (columns, here), splits as usize, split_partial);
                return fold_in_block::<O, _, _>(lanes, here, rounds, staged, |c, v| store(c0 + c, v));
            }
            fold_in_block::<O, _, _>(lanes, here, splits as usize, split_partial, |c, v| store(c0 + c, v));
        }
    }
}

/// Accumulators of this size or more (the arg ops' (value, index) pairs) are folded across
/// splits by whole rows of partials ([`fold_split_rows`]) where a tile's columns take groups of
/// lanes. 2^20 × 16 argmax (256 and 128 splits): f32 29.0 → 26.9 µs, bf16 21.5 → 20.9; the
/// same rows slowed the sums (f32 24.3 → 25.2, bf16 16.3 → 17.6) and left max as it was (H200).
#[cfg(target_os = "cuda")]
const ROW_FOLD_MIN_BYTES: usize = 16;

/// A tile's last block, after its ticket, for `columns` < B (a power of two): thread t folds
/// column t mod `columns` of splits ⌊t / columns⌋, ⌊t / columns⌋ + B / columns, … in order
/// (`load(c, k)`, [`fold_strided`]) and stages it as [`Tile::slot`] lays phases out;
/// returns the rounds staged per column, B / columns. A warp's loads then cover whole rows of
/// partials, where groups of lanes per column read pairs a row apart.
#[cfg(target_os = "cuda")]
#[inline(always)]
unsafe fn fold_split_rows<O: ReduceOp, L: Fn(usize, usize) -> O::Acc>(
    stage: *mut O::Acc,
    (columns, here): (usize, usize),
    splits: usize,
    load: L,
) -> usize {
    let tid = thread_idx_x() as usize;
    let rounds = block_dim_x() as usize / columns;
    let (first, c) = (tid / columns, tid % columns);
    let v = if c < here { fold_strided::<O, _>(first, rounds, splits, |k| load(c, k)) } else { O::identity() };
    *stage.add(first * columns + c) = v;
    sync_threads();
    rounds
}

#[cfg(target_os = "cuda")]
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn tiles_body<E: Element, O: Fold<E>>(
    input: *const E,
    (rows, n, lda): (usize, usize, usize),
    (tile, splits, width): (u32, u32, u32),
    partials: *mut O::Acc,
    tickets: *mut u32,
    out: *mut O::Acc,
) {
    let stage = shared_array!(AXIS_TILE_STAGE: [u64; TILE_STAGE]) as *mut O::Acc;
    let t = Tile::of_block(n, tile, width);
    walk_column_values::<E, O, _>(input, rows, n, lda, tile, splits, width, |c, _, acc| *stage.add(t.slot(c)) = acc);
    t.fold::<O, _>(stage, (n, splits), partials, tickets, |c, v| *out.add(c) = v)
}

/// The block's stage of (value, index) pairs.
#[cfg(target_os = "cuda")]
#[inline(always)]
fn arg_stage<E>() -> *mut ValueIndex<E> {
    shared_array!(AXIS_ARG_TILE_STAGE: [u64; 2 * TILE_STAGE]) as *mut ValueIndex<E>
}

/// `tiles` of argmin or argmax toward `D`: the `cols` arg walk ([`walk_column_tracks`]), each
/// column's (value, first row) staged and folded as the typed ops' are; results to `out`.
#[cfg(target_os = "cuda")]
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn arg_tiles_body<E: ArgElement, D: Direction<E>, S: Fn(usize, ValueIndex<E>)>(
    input: *const E,
    (rows, n, lda): (usize, usize, usize),
    (tile, splits, width): (u32, u32, u32),
    partials: *mut ValueIndex<E>,
    tickets: *mut u32,
    out: S,
) {
    let stage = arg_stage::<E>();
    let t = Tile::of_block(n, tile, width);
    walk_column_tracks::<E, D, _>(input, rows, n, lda, tile, splits, width, |c, v| *stage.add(t.slot(c)) = v);
    t.fold::<ArgOf<E, D>, _>(stage, (n, splits), partials, tickets, out)
}

/// `tiles` of argmin or argmax of halves toward `D` by their words' extremes, as the `words`
/// kernels walk them ([`walk_column_words`]: a 16-byte vector of columns per thread); each
/// column's (value, first row) staged and folded as [`arg_tiles_body`]'s.
#[cfg(target_os = "cuda")]
#[inline(always)]
pub(crate) unsafe fn arg_word_tiles_body<E: ArgElement, D: Direction<E>, S: Fn(usize, ValueIndex<E>)>(
    input: *const E,
    (rows, n, lda): (usize, usize, usize),
    (tile, splits): (u32, u32),
    partials: *mut ValueIndex<E>,
    tickets: *mut u32,
    out: S,
) {
    let stage = arg_stage::<E>();
    let t = Tile::of_block(n, tile, E::PER_VEC as u32);
    let value = |c: usize, r: usize| *input.add(r * lda + c);
    walk_column_words::<E, D, _, _>(
        input,
        rows,
        n,
        lda,
        tile,
        splits,
        |c, _, track: Track<E, D>| *stage.add(t.slot(c)) = track.resolve_element(|r| value(c, r)),
        |_, _| false,
    );
    t.fold::<ArgOf<E, D>, _>(stage, (n, splits), partials, tickets, out)
}

/// The `tiles` entry point of op `$op` (named `$opname`) over `$e`, accumulating in `$acc`.
macro_rules! tiles_entry {
    ($e:ident, $opname:ident: $op:ty, $acc:ty) => {
        paste::paste! {
            #[cfg(target_os = "cuda")]
            #[kernel]
            pub unsafe fn [<axis_tiles_ $opname _ $e>](
                input: *const $e, rows: usize, n: usize, lda: usize, tile: u32, splits: u32, width: u32,
                partials: *mut $acc, tickets: *mut u32, out: *mut $acc,
            ) {
                crate::grid_dependency::wait_for_prerequisite_grids();
                tiles_body::<$e, $op>(input, (rows, n, lda), (tile, splits, width), partials, tickets, out)
            }
        }
    };
}

/// Every typed op's `tiles` entry point for each of the types, and their list.
macro_rules! column_tiles {
    ($($t:ident => $sum:ident),* $(,)?) => {
        /// Element types with `tiles` entries, `axis_tiles_{op}_{type}` over `TYPED_OPS`.
        pub const AXIS_TILE_TYPES: [&str; [$(stringify!($t)),*].len()] = [$(stringify!($t)),*];
        $(
            tiles_entry!($t, sum: Sum<$sum>, $sum);
            tiles_entry!($t, min: Min<$t>, $t);
            tiles_entry!($t, max: Max<$t>, $t);
            tiles_entry!($t, minmax: MinMax<$t>, Pair<$t>);
        )*
    };
}

/// Calls `$family!` with the types that have `tiles` entries and their sums' accumulators.
macro_rules! tile_types {
    ($family:ident) => {
        $family! { f32 => f32, f16 => f32, bf16 => f32 }
    };
}
pub(crate) use tile_types;

tile_types!(column_tiles);
