//! Steps 1–2: the shared-memory tree with interleaved addressing.
//! Each thread loads one element; grid = ceil(n / B). Limits: half the threads idle from the
//! first step; step 1 diverges inside warps (and pays for `%`), step 2 has bank conflicts.
use super::tree::tree_scratch;
use crate::block::sync_threads;
use crate::ops::ReduceOp;
use crate::thread::block_index;
use cuda_std::thread::thread_idx_x;

/// Loads `input[block * B + tid]` (identity past the end) into shared memory.
#[inline(always)]
pub(super) unsafe fn load_one<O: ReduceOp, const B: u32>(input: &[O::Acc]) -> *mut O::Acc {
    let sdata = tree_scratch::<O::Acc>();
    let tid = thread_idx_x();
    let i = block_index() * B as usize + tid as usize; // 64-bit: n may pass 2^32
    *sdata.add(tid as usize) = if i < input.len() { input[i] } else { O::identity() };
    sync_threads();
    sdata
}

/// Step 1: `tid % (2s) == 0` picks the active threads: divergent branches in every warp.
pub unsafe fn interleaved_divergent<O: ReduceOp, const B: u32>(input: &[O::Acc], _grain: u32) -> O::Acc {
    let sdata = load_one::<O, B>(input);
    let tid = thread_idx_x();
    let mut s = 1;
    while s < B {
        if tid % (2 * s) == 0 {
            *sdata.add(tid as usize) = O::combine(*sdata.add(tid as usize), *sdata.add((tid + s) as usize));
        }
        sync_threads();
        s *= 2;
    }
    *sdata
}

/// Step 1, mask form: `(tid & (2s - 1)) == 0` replaces the modulo; still divergent.
pub unsafe fn interleaved_mask<O: ReduceOp, const B: u32>(input: &[O::Acc], _grain: u32) -> O::Acc {
    let sdata = load_one::<O, B>(input);
    let tid = thread_idx_x();
    let mut s = 1;
    while s < B {
        if tid & (2 * s - 1) == 0 {
            *sdata.add(tid as usize) = O::combine(*sdata.add(tid as usize), *sdata.add((tid + s) as usize));
        }
        sync_threads();
        s *= 2;
    }
    *sdata
}

/// Step 2: strided index `2 * s * tid` keeps active threads contiguous (no divergence), but
/// the strided shared-memory accesses conflict across banks.
pub unsafe fn interleaved_strided<O: ReduceOp, const B: u32>(input: &[O::Acc], _grain: u32) -> O::Acc {
    let sdata = load_one::<O, B>(input);
    let tid = thread_idx_x();
    let mut s = 1;
    while s < B {
        let index = 2 * s * tid;
        if index < B {
            *sdata.add(index as usize) = O::combine(*sdata.add(index as usize), *sdata.add((index + s) as usize));
        }
        sync_threads();
        s *= 2;
    }
    *sdata
}
