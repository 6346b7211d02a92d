//! What the row kernels share: persistent warps over tiles of rows.

/// Calls `tile(first)` for each of this warp's tiles of `rows` consecutive rows below `m`:
/// tile `w`, then `w + W`, `w + 2W`, … (w = global warp index, W = warps in the grid).
#[inline(always)]
pub(super) unsafe fn for_each_tile(m: usize, rows: usize, mut tile: impl FnMut(usize)) {
    use crate::thread::{block_index, grid_blocks};
    use cuda_std::thread::{block_dim_x, thread_idx_x};
    let warps_per_block = (block_dim_x() / crate::config::WARP_SIZE) as usize;
    let warp = block_index() * warps_per_block + (thread_idx_x() / crate::config::WARP_SIZE) as usize;
    let stride = grid_blocks() * warps_per_block * rows;
    let mut first = warp * rows;
    while first < m {
        tile(first);
        first += stride;
    }
}
