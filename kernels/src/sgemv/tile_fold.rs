//! The hand-off between blocks that split one tile of outputs: each block stores its partials,
//! takes a ticket on the tile's counter, and the tile's last block goes on to fold them in split
//! order (deterministic, one launch). Limits: a counter per tile, 0 before the launch (the last
//! block leaves it 0).
use crate::block::{fence_acq_rel_gpu, sync_threads};
use crate::shared::shared_array;
use core::ptr::write_volatile;
use core::sync::atomic::Ordering;
use cuda_std::thread::thread_idx_x;

/// Every thread calls this after storing its partials. True in every thread of the tile's last
/// block (of `splits`), which may then read the others' partials with volatile loads.
#[inline(always)]
pub unsafe fn last_of_tile(counter: *mut u32, splits: u32) -> bool {
    let is_last = shared_array!(SHARED_TILE_IS_LAST: [u32; 1]);
    fence_acq_rel_gpu();
    sync_threads();
    if thread_idx_x() == 0 {
        let ticket = cuda_std::atomic::mid::atomic_fetch_add_u32_device(counter, Ordering::Relaxed, 1);
        let last = ticket == splits - 1;
        if last {
            write_volatile(counter, 0);
        }
        *is_last = last as u32;
    }
    sync_threads();
    let last = *is_last != 0;
    if last {
        fence_acq_rel_gpu();
    }
    last
}
