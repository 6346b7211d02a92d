//! The shared-memory tree the ladder's block steps fold through: its scratch and its result.
use crate::shared::shared_array;

/// The tree's result in `sdata[0]`, read by thread 0 only: it is valid in thread 0 only, and
/// after a warp-synchronous tail (no block barrier) other warps' reads would race with warp 0.
/// The read is volatile so that the compiler cannot hoist it out of the branch into every
/// thread (a plain load was speculated, and racecheck caught the other warps' reads).
#[inline(always)]
pub(super) unsafe fn tree_result<O: crate::ops::ReduceOp>(sdata: *const O::Acc) -> O::Acc {
    if cuda_std::thread::thread_idx_x() == 0 {
        core::ptr::read_volatile(sdata)
    } else {
        O::identity()
    }
}

/// Shared memory for the tree steps: one 4-byte slot per thread of the largest block.
#[inline(always)]
pub(super) fn tree_scratch<T>() -> *mut T {
    shared_array!(SHARED_TREE: [u32; crate::config::MAX_BLOCK as usize]) as *mut T
}
