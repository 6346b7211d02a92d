//! Test only: the `Vectorized` f32 sum with the `FLAGGED` finish, its tickets drawn in reverse
//! block order, so that block 0, which the device dispatches first, is the one that folds. The
//! result must be the normal launch's to the bit: who folds does not change the order.
//!
//! # Safety
//! As the ladder's entry points with block 256, and every block of the grid resident at once
//! (block b waits for blocks b + 1, b + 2, … to draw their tickets): launch a few blocks only.
//!
//! # Thread mapping
//! As [`super::vectorized`]; thread 0 of each block draws the ticket.
use super::vectorized;
use crate::block;
use crate::config::finish;
use crate::ops::Sum;
use core::sync::atomic::Ordering;
use cuda_std::prelude::*;
use cuda_std::thread::{block_idx_x, grid_dim_x, thread_idx_x};

#[kernel]
pub unsafe fn test_flagged_reverse_tickets_f32_b256(
    input: &[f32],
    grain: u32,
    partials: *mut f32,
    counter: *mut u32,
    out: *mut f32,
) {
    crate::grid_dependency::wait_for_prerequisite_grids();
    let (b, grid) = (block_idx_x(), grid_dim_x());
    let mut ticket = 0;
    if thread_idx_x() == 0 && grid > 1 {
        while block::load_u32_relaxed_gpu(counter) < grid - 1 - b {}
        ticket = cuda_std::atomic::mid::atomic_fetch_add_u32_device(counter, Ordering::Relaxed, 1);
    }
    let v = vectorized::<Sum<f32>, 256>(input, grain);
    block::emit::<Sum<f32>>(v, finish::FLAGGED, ticket, partials, counter, block::Out::device(out));
}
