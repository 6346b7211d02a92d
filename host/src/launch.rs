//! Launch arithmetic: grids, resident blocks, the fast path's size classes and length limits.
//! Pure functions of the shape and the device's counts, tested on the CPU.
use crate::error::{Error, Result};

/// Blocks of `block` threads for a vectorized reduction over `bytes`: `vectors_per_thread`
/// 16-byte loads per thread for small inputs, at most the blocks the device keeps resident
/// for large ones (threads then stride over the rest).
pub fn vectorized_grid(
    bytes: usize,
    block: u32,
    vectors_per_thread: u32,
    sm_count: u32,
    max_threads_per_sm: u32,
) -> u32 {
    let resident = resident_blocks(block, sm_count, max_threads_per_sm) as usize;
    let per_block = block as usize * vectors_per_thread.max(1) as usize * kernels::config::VECTOR_BYTES;
    ((bytes + per_block - 1) / per_block).clamp(1, resident) as u32
}

/// Blocks of `block` threads the device keeps resident at once (at least one per SM).
pub fn resident_blocks(block: u32, sm_count: u32, max_threads_per_sm: u32) -> u32 {
    sm_count * (max_threads_per_sm / block).max(1)
}

/// The fast path's (threads per block, vectors per thread) for `bytes` of input.
pub fn fast_launch(bytes: usize) -> (u32, u32) {
    let rows = kernels::config::FAST_LAUNCH;
    let &(_, block, grain) = rows.iter().find(|&&(max, _, _)| bytes <= max).unwrap_or(&rows[rows.len() - 1]);
    (block, grain)
}

/// `blocks` as a launch's grid: `TooLarge` past the device's largest grid (`max_grid_x`).
/// Lengths themselves are 64-bit in every kernel; only a one-element-per-thread ladder step
/// can need more blocks than a grid holds (past 2^31 · block elements).
pub fn check_grid(blocks: usize, max_grid_x: u32) -> Result<u32> {
    if blocks > max_grid_x as usize {
        return Err(Error::TooLarge { what: "grid blocks", len: blocks, max: max_grid_x as usize });
    }
    Ok(blocks as u32)
}

/// `a / b` rounded up.
pub fn div_ceil(a: usize, b: usize) -> usize {
    (a + b - 1) / b
}
