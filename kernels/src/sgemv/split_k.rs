//! Split-K for few, wide rows (`Op::N`): block `b` folds one chunk of `chunk` columns of row
//! `b / splits` (float4 or scalar loads, four quads in flight per thread), then a block
//! reduction. One split stores y[row]; with several, the row's last block (`tile_fold`) folds
//! the row's partials in split order. Limits: `chunk % 4 == 0`; grid = m · splits blocks.
use super::problem::Gemv;
use super::tile_fold;
use crate::block;
use crate::ops::Sum;
use crate::thread::{dot4, load4};
use core::ptr::write_volatile;
use cuda_std::thread::{block_dim_x, block_idx_x, grid_dim_x, thread_idx_x};

/// Thread mapping: thread t reads quads t, t + B, … of its block's chunk (B = block size).
pub unsafe fn rows<const VEC: bool>(g: Gemv, chunk: usize, partials: *mut f32, counters: *mut u32) {
    let Gemv { a, x, lda, .. } = g;
    let (row, start, len) = chunk_of(&g, chunk);
    let (arow, xs) = (a.add(row * lda + start), x.add(start));
    let (tid, step) = (thread_idx_x() as usize, block_dim_x() as usize);
    let full = len / 4;
    let mut acc = 0.0f32;
    let mut q = tid;
    while q + 3 * step < full {
        let p = [q, q + step, q + 2 * step, q + 3 * step];
        let av = [
            load4::<VEC>(arow.add(4 * p[0]), 4),
            load4::<VEC>(arow.add(4 * p[1]), 4),
            load4::<VEC>(arow.add(4 * p[2]), 4),
            load4::<VEC>(arow.add(4 * p[3]), 4),
        ];
        for k in 0..4 {
            acc += dot4(av[k], load4::<VEC>(xs.add(4 * p[k]), 4));
        }
        q += 4 * step;
    }
    while q < full {
        acc += dot4(load4::<VEC>(arow.add(4 * q), 4), load4::<VEC>(xs.add(4 * q), 4));
        q += step;
    }
    if tid == 0 && len % 4 != 0 {
        acc += dot4(load4::<false>(arow.add(4 * full), len % 4), load4::<false>(xs.add(4 * full), len % 4));
    }
    finish(&g, acc, partials, counters);
}

/// Row `b / splits` and its chunk `b % splits` of this block: (row, first column, columns).
#[inline(always)]
pub(super) fn chunk_of(g: &Gemv, chunk: usize) -> (usize, usize, usize) {
    let splits = grid_dim_x() as usize / g.m;
    let b = block_idx_x() as usize;
    let (row, split) = (b / splits, b % splits);
    let start = core::cmp::min(split * chunk, g.n);
    (row, start, core::cmp::min(start + chunk, g.n) - start)
}

/// Reduces the block's `acc` and stores y for its row: directly with one split, else through
/// the row's partials, which the row's last block folds in split order.
#[inline(always)]
pub(super) unsafe fn finish(g: &Gemv, acc: f32, partials: *mut f32, counters: *mut u32) {
    let splits = grid_dim_x() as usize / g.m;
    let b = block_idx_x() as usize;
    let (row, tid) = (b / splits, thread_idx_x());
    let dot = block::reduce::<Sum<f32>>(acc);
    if splits == 1 {
        if tid == 0 {
            g.store(row, dot);
        }
        return;
    }
    if tid == 0 {
        write_volatile(partials.add(b), dot);
    }
    if tile_fold::last_of_tile(counters.add(row), splits as u32) {
        let total = block::reduce_array::<Sum<f32>>(partials.add(row * splits), splits);
        if tid == 0 {
            g.store(row, total);
        }
    }
}
