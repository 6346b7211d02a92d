//! The split rows of the `pieces` kernels ([`crate::axis`] and [`crate::axis_arg`]): their loop
//! over pieces ([`walk_pieces`]) and the hand-off between a row's pieces ([`fold_if_last`]):
//! each group of lanes stores its piece's partial, takes a ticket on the row's counter, and the
//! group that takes the row's last ticket folds the row's partials in piece order
//! (deterministic, no second launch). The warp-level form of [`crate::sgemv::tile_fold`]'s
//! block hand-off. Limits: a counter per row, 0 before the launch (the last group leaves it 0).
//!
//! Why the last group reads every partial: the storing lane fences (`fence.acq_rel.gpu`)
//! between its store and its ticket; the adds on one counter are totally ordered, so the lane
//! that takes the last ticket reads after every other add, and fences before reading; it then
//! meets its group's other lanes at `bar.warp.sync` (which orders memory among the lanes that
//! take part), and each of them fences too before loading the partials (volatile loads: L2, not
//! a stale L1 line).
use crate::block::fence_acq_rel_gpu;
use crate::config::WARP_SIZE;
use crate::ops::ReduceOp;
use crate::shuffle::shfl_idx_b32;
use crate::thread::{block_index, fold_strided, grid_blocks};
use crate::warp;
use core::ptr::{read_volatile, write_volatile};
use core::sync::atomic::Ordering;
use cuda_std::thread::{block_dim_x, thread_idx_x};

/// Walks `rows` rows split into `chunks` pieces, a group of `lanes` lanes per piece: piece k of
/// row r is item r·chunks + k, the grid's groups taking the items in turn. `fold(row, len,
/// (k, chunks), lane)` is a lane's share of its piece (`len` n, or 0 for a group past the last
/// item), folded across the group and stored from its first lane into `partials[item]`. With
/// `tickets`, the row's last piece folds the row's partials ([`fold_if_last`]) and its first
/// lane calls `store(row, result)`; with null `tickets` the partials are left to the fold launch.
///
/// # Thread mapping
/// Group g = tid / lanes of block b takes items b·(B / lanes) + g, then a grid's worth later.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn walk_pieces<O, F, S>(
    rows: usize,
    n: usize,
    lanes: u32,
    chunks: u32,
    partials: *mut O::Acc,
    tickets: *mut u32,
    fold: F,
    store: S,
) where
    O: ReduceOp,
    F: Fn(usize, usize, (usize, usize), usize) -> O::Acc,
    S: Fn(usize, O::Acc),
{
    let tid = thread_idx_x();
    let (group, lane) = ((tid / lanes) as usize, (tid % lanes) as usize);
    let per_block = (block_dim_x() / lanes) as usize;
    let (pieces, items) = (chunks as usize, rows * chunks as usize);
    // The warp's first group: every lane of a warp takes the same turns and shuffles.
    let warp_first = (tid / WARP_SIZE * WARP_SIZE / lanes) as usize;
    let step = grid_blocks() * per_block;
    let mut first = block_index() * per_block;
    while first + warp_first < items {
        let item = first + group;
        let mine = item < items;
        let (row, len) = if mine { (item / pieces, n) } else { (0, 0) };
        let v = warp::group_reduce::<O>(fold(row, len, (item % pieces, pieces), lane), lanes);
        if lane == 0 && mine {
            *partials.add(item) = v;
        }
        if !tickets.is_null() {
            if let Some(total) = fold_if_last::<O>(partials, tickets, row, pieces, lanes, mine) {
                if lane == 0 {
                    store(row, total);
                }
            }
        }
        first += step;
    }
}

/// Called by the whole warp after each group of `lanes` lanes (a power of two ≤ 32, the same in
/// every lane) has stored its piece of row `row` into `partials[row·pieces + piece]` from its
/// first lane (`stored`: its group had a piece). In the group that takes the row's last ticket
/// on `tickets[row]`, folds the row's `pieces` partials in order, lane k of the group loading
/// pieces k, k + lanes, …, and returns the row's result in each of its lanes; `None` elsewhere.
#[inline(always)]
pub unsafe fn fold_if_last<O: ReduceOp>(
    partials: *const O::Acc,
    tickets: *mut u32,
    row: usize,
    pieces: usize,
    lanes: u32,
    stored: bool,
) -> Option<O::Acc> {
    let lane = warp::lane();
    let first = lane - lane % lanes;
    let mut ticket = 0;
    if stored && lane == first {
        fence_acq_rel_gpu();
        ticket = cuda_std::atomic::mid::atomic_fetch_add_u32_device(tickets.add(row), Ordering::Relaxed, 1) + 1;
        if ticket == pieces as u32 {
            // Every piece has its ticket: no later add of this launch.
            write_volatile(tickets.add(row), 0);
            fence_acq_rel_gpu();
        }
    }
    let last = shfl_idx_b32(ticket, first) == pieces as u32;
    warp::sync();
    if last {
        fence_acq_rel_gpu();
    }
    // Every lane runs the loop (no pieces outside the last group) and the group's shuffles.
    let count = if last { pieces } else { 0 };
    let base = partials.add(row * pieces);
    // Eight loads in flight: one round for the host's rows (at most `AXIS_MAX_ROW_PIECES` pieces).
    let v = fold_strided::<O, _>((lane - first) as usize, lanes as usize, count, |k| read_volatile(base.add(k)));
    let v = warp::group_reduce::<O>(v, lanes);
    if last {
        Some(v)
    } else {
        None
    }
}
