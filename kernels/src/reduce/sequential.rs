//! Steps 3–4: sequential addressing, then the first add during the global load.
use super::interleaved::load_one;
use super::tree::tree_scratch;
use crate::block::sync_threads;
use crate::ops::ReduceOp;
use crate::thread::block_index;
use cuda_std::thread::thread_idx_x;

/// Tree over `sdata[0..B]` with stride halving from B/2 while `s > stop`: active threads are
/// contiguous and accesses conflict-free. Leaves the partial results in `sdata[0..2*stop]`.
#[inline(always)]
pub(super) unsafe fn tree_sequential<O: ReduceOp, const B: u32>(sdata: *mut O::Acc, stop: u32) {
    let tid = thread_idx_x();
    let mut s = B / 2;
    while s > stop {
        if tid < s {
            *sdata.add(tid as usize) = O::combine(*sdata.add(tid as usize), *sdata.add((tid + s) as usize));
        }
        sync_threads();
        s /= 2;
    }
}

/// Step 3: sequential addressing (`tid < s`, `s = B/2 … 1`). One element per thread; grid =
/// ceil(n / B). Limit: half the threads are idle after the load.
pub unsafe fn sequential<O: ReduceOp, const B: u32>(input: &[O::Acc], _grain: u32) -> O::Acc {
    let sdata = load_one::<O, B>(input);
    tree_sequential::<O, B>(sdata, 0);
    *sdata
}

/// Loads `input[i] + input[i + B]` with `i = block * 2B + tid`: two elements per thread.
#[inline(always)]
pub(super) unsafe fn load_two<O: ReduceOp, const B: u32>(input: &[O::Acc]) -> *mut O::Acc {
    let sdata = tree_scratch::<O::Acc>();
    let tid = thread_idx_x();
    let i = block_index() * (2 * B) as usize + tid as usize; // 64-bit: n may pass 2^32
    let n = input.len();
    let mut v = if i < n { input[i] } else { O::identity() };
    if i + (B as usize) < n {
        v = O::combine(v, input[i + B as usize]);
    }
    *sdata.add(tid as usize) = v;
    sync_threads();
    sdata
}

/// Step 4: the first add happens during the global load, so half as many blocks
/// (grid = ceil(n / 2B)). Limit: the tree's last steps still synchronize the whole block.
pub unsafe fn first_add<O: ReduceOp, const B: u32>(input: &[O::Acc], _grain: u32) -> O::Acc {
    let sdata = load_two::<O, B>(input);
    tree_sequential::<O, B>(sdata, 0);
    *sdata
}
