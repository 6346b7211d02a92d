//! `Op::T` with one column per lane and deep row batches: a warp reads 32 consecutive floats of
//! a row with scalar loads, one coalesced 128-byte stripe of any alignment, and keeps `DEPTH`
//! rows in flight; each lane loads one of the batch's x values and the warp shares them by
//! shuffles. Block b owns column tile b % tiles (32 columns, from 32 · tile - shift: when every
//! row starts equally misaligned, the host shifts the tiles so that each stripe is one aligned
//! 128-byte line) over the rows of split b / tiles; its warps walk rows w, w + W, … (W warps);
//! the rows past a split's last full batch go in one masked batch. The end is `transposed`'s:
//! warps fold in order, splits in split order. Deterministic. Limits: block = `SGEMV_T_BLOCK`,
//! DEPTH ≤ 32, shift < 32.
use super::problem::Gemv;
use super::transposed::{fold_tile, Tile};
use crate::config::{SGEMV_T_BLOCK, WARP_SIZE};
use crate::shared::shared_array;
use crate::shuffle::shfl_idx_f32;
use cuda_std::thread::{block_idx_x, thread_idx_x};

const LANES: usize = WARP_SIZE as usize;
const WARPS: usize = SGEMV_T_BLOCK as usize / LANES;

/// Thread mapping: thread t is lane t % 32 (column tile · 32 + t % 32) of warp t / 32.
pub unsafe fn columns<const DEPTH: usize>(
    g: Gemv,
    rows_per_split: usize,
    shift: usize,
    partials: *mut f32,
    counters: *mut u32,
) {
    let Gemv { a, x, m, n, lda, .. } = g;
    let sums = shared_array!(SHARED_T_STRIPES_SUMS: [f32; SGEMV_T_BLOCK as usize]);
    let stage = shared_array!(SHARED_T_STRIPES_STAGE: [f32; SGEMV_T_BLOCK as usize]);
    let tiles = (n + shift + LANES - 1) / LANES;
    let b = block_idx_x() as usize;
    let (tile, split) = (b % tiles, b / tiles);
    let tid = thread_idx_x() as usize;
    let (lane, warp) = (tid % LANES, tid / LANES);
    // A lane before column 0 or past n reads column 0 or n - 1 (valid addresses; n ≥ 1) and its
    // sum is never stored.
    let col = core::cmp::min((tile * LANES + lane).saturating_sub(shift), n - 1);
    let r1 = core::cmp::min((split + 1) * rows_per_split, m);
    let at = |r: usize| a.add(r * lda + col);
    // Lane j's x: row r + j · WARPS of the batch (lanes past DEPTH reload row r).
    let x_of = |r: usize, live: usize| *x.add(if lane < live { r + lane * WARPS } else { r });
    let mut acc = 0.0f32;
    let mut r = split * rows_per_split + warp;
    while r + (DEPTH - 1) * WARPS < r1 {
        let xl = x_of(r, DEPTH);
        let mut av = [0.0f32; DEPTH];
        for k in 0..DEPTH {
            av[k] = *at(r + k * WARPS);
        }
        for k in 0..DEPTH {
            acc += av[k] * shfl_idx_f32(xl, k as u32);
        }
        r += DEPTH * WARPS;
    }
    if r < r1 {
        // The last rows: `live` of them; the others read row r again and add nothing.
        let live = (r1 - r + WARPS - 1) / WARPS;
        let xl = x_of(r, live);
        let mut av = [0.0f32; DEPTH];
        for k in 0..DEPTH {
            av[k] = *at(if k < live { r + k * WARPS } else { r });
        }
        for k in 0..DEPTH {
            let p = acc + av[k] * shfl_idx_f32(xl, k as u32);
            acc = if k < live { p } else { acc };
        }
    }
    *sums.add(tid) = acc; // = warp · 32 + lane
    let t = Tile { cols: LANES, groups: WARPS, index: tile, count: tiles, shift };
    fold_tile(g, t, sums, stage, partials, counters);
}
