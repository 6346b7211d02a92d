//! `Op::T`, y = alpha·Aᵀx + beta·y (x has m entries, y has n): block b owns column tile
//! `b % tiles` (4·L columns: L lanes per row, a float4 or four scalars each) over the rows of
//! split `b / tiles`. The B/L lane groups walk rows g, g + B/L, … with four rows in flight, so
//! each step reads B/L row segments, coalesced. Groups fold in a fixed order through shared
//! memory; with several splits the tile's last block (`tile_fold`) folds the splits' partials
//! in split order. Deterministic. Limits: L a power of two ≤ block / 4, block =
//! `SGEMV_T_BLOCK`; float4 (`VEC`) needs aligned A, lda % 4 == 0 and n % 4 == 0.
use super::problem::Gemv;
use super::tile_fold;
use crate::block::sync_threads;
use crate::config::SGEMV_T_BLOCK;
use crate::shared::shared_array;
use crate::thread::load4;
use core::ptr::{read_volatile, write_volatile};
use cuda_std::thread::{block_idx_x, grid_dim_x, thread_idx_x};

const B: usize = SGEMV_T_BLOCK as usize;

/// Folds `count` values per tile column (`get(i, c)`, i = 0..count) with the whole block in a
/// fixed order: thread t sums i ≡ t / cols (mod B / cols) in increasing i, four loads at a time,
/// then threads t < cols fold those sums in order. Column t's total is in thread t < cols.
#[inline(always)]
unsafe fn fold_columns(cols: usize, count: usize, stage: *mut f32, get: impl Fn(usize, usize) -> f32) -> f32 {
    let tid = thread_idx_x() as usize;
    let (c, sub, subs) = (tid % cols, tid / cols, B / cols);
    let mut acc = 0.0f32;
    let mut i = sub;
    while i + 3 * subs < count {
        let v = [get(i, c), get(i + subs, c), get(i + 2 * subs, c), get(i + 3 * subs, c)];
        acc += v[0];
        acc += v[1];
        acc += v[2];
        acc += v[3];
        i += 4 * subs;
    }
    while i < count {
        acc += get(i, c);
        i += subs;
    }
    sync_threads(); // `stage` may still be read by an earlier fold
    *stage.add(tid) = acc;
    sync_threads();
    let mut total = 0.0f32;
    if tid < cols {
        for s in 0..subs {
            total += *stage.add(s * cols + tid);
        }
    }
    total
}

/// Thread mapping: thread t is lane t % L of group t / L; see the file comment.
pub unsafe fn columns<const VEC: bool>(
    g: Gemv,
    lanes: usize,
    rows_per_split: usize,
    partials: *mut f32,
    counters: *mut u32,
) {
    let Gemv { a, x, m, n, lda, .. } = g;
    let sums = shared_array!(SHARED_T_SUMS: [f32; 4 * SGEMV_T_BLOCK as usize]);
    let stage = shared_array!(SHARED_T_STAGE: [f32; SGEMV_T_BLOCK as usize]);
    let cols = 4 * lanes;
    let tiles = (n + cols - 1) / cols;
    let b = block_idx_x() as usize;
    let (tile, split) = (b % tiles, b / tiles);
    let tid = thread_idx_x() as usize;
    let (group, groups) = (tid / lanes, B / lanes);
    let col = tile * cols + 4 * (tid % lanes);
    let count = core::cmp::min(n.saturating_sub(col), 4);
    let r1 = core::cmp::min((split + 1) * rows_per_split, m);
    let mut acc = [0.0f32; 4];
    if count > 0 {
        let at = |r: usize| a.add(r * lda + col);
        let mut r = split * rows_per_split + group;
        while r + 3 * groups < r1 {
            let rs = [r, r + groups, r + 2 * groups, r + 3 * groups];
            let av = [
                load4::<VEC>(at(rs[0]), count),
                load4::<VEC>(at(rs[1]), count),
                load4::<VEC>(at(rs[2]), count),
                load4::<VEC>(at(rs[3]), count),
            ];
            let xv = [*x.add(rs[0]), *x.add(rs[1]), *x.add(rs[2]), *x.add(rs[3])];
            for k in 0..4 {
                for c in 0..4 {
                    acc[c] += f32::from_bits(av[k][c]) * xv[k];
                }
            }
            r += 4 * groups;
        }
        while r < r1 {
            let (av, xv) = (load4::<VEC>(at(r), count), *x.add(r));
            for c in 0..4 {
                acc[c] += f32::from_bits(av[c]) * xv;
            }
            r += groups;
        }
    }
    for c in 0..4 {
        *sums.add(4 * tid + c) = acc[c]; // = group · cols + 4 · lane + c
    }
    fold_tile(g, Tile { cols, groups, index: tile, count: tiles, shift: 0 }, sums, stage, partials, counters);
}

/// A block's column tile: `cols` columns from `index · cols - shift` (the first tile may start
/// before column 0), summed by `groups` row groups; `count` tiles in all.
pub(super) struct Tile {
    pub cols: usize,
    pub groups: usize,
    pub index: usize,
    pub count: usize,
    pub shift: usize,
}

/// The end every transposed kernel shares: `sums` holds each row group's `cols` column sums
/// (group-major); the block folds the groups in order, and then either stores its tile of y
/// (one split) or its partials, the tile's last block folding the splits in split order.
#[inline(always)]
pub(super) unsafe fn fold_tile(
    g: Gemv,
    t: Tile,
    sums: *mut f32,
    stage: *mut f32,
    partials: *mut f32,
    counters: *mut u32,
) {
    let n = g.n;
    let Tile { cols, groups, index: tile, count: tiles, shift } = t;
    let (split, splits) = (block_idx_x() as usize / tiles, grid_dim_x() as usize / tiles);
    let tid = thread_idx_x() as usize;
    sync_threads();
    let total = fold_columns(cols, groups, stage, |g, c| *sums.add(g * cols + c));
    // Output column of thread tid < cols; "before column 0" wraps past n.
    let column = |c: usize| (tile * cols + c).wrapping_sub(shift);
    let out = column(tid);
    let mine = tid < cols && out < n;
    if splits == 1 {
        if mine {
            g.store(out, total);
        }
        return;
    }
    if mine {
        write_volatile(partials.add(split * n + out), total);
    }
    if tile_fold::last_of_tile(counters.add(tile), splits as u32) {
        let partial = |i: usize, c: usize| {
            let j = column(c);
            if j < n {
                read_volatile(partials.add(i * n + j))
            } else {
                0.0
            }
        };
        let total = fold_columns(cols, splits, stage, partial);
        if mine {
            g.store(out, total);
        }
    }
}
