//! Steps 5–6: unrolling. Both load two elements per thread (grid = ceil(n / 2B)).
use super::sequential::{load_two, tree_sequential};
use super::tree::tree_result;
use crate::block::sync_threads;
use crate::ops::ReduceOp;
use crate::warp;
use core::ptr::{read_volatile, write_volatile};
use cuda_std::thread::thread_idx_x;

/// The last 64 → 1 steps by warp 0 alone, without block barriers. Harris's original relies on
/// implicit warp-synchronous execution, which Volta and later do not guarantee: each step reads,
/// waits at a warp barrier, writes, and waits again.
#[inline(always)]
unsafe fn warp_tail<O: ReduceOp>(sdata: *mut O::Acc) {
    let tid = thread_idx_x() as usize;
    let mut v = read_volatile(sdata.add(tid));
    let mut offset = 32;
    while offset > 0 {
        v = O::combine(v, read_volatile(sdata.add(tid + offset)));
        warp::sync();
        write_volatile(sdata.add(tid), v);
        warp::sync();
        offset /= 2;
    }
}

/// Step 5: unrolls the last warp (`tid < 32`) so the final six steps need no `sync_threads`.
/// Limit: the loop over the earlier steps remains.
pub unsafe fn unrolled_warp<O: ReduceOp, const B: u32>(input: &[O::Acc], _grain: u32) -> O::Acc {
    let sdata = load_two::<O, B>(input);
    tree_sequential::<O, B>(sdata, 32);
    if thread_idx_x() < 32 {
        warp_tail::<O>(sdata);
    }
    tree_result::<O>(sdata)
}

/// One tree step of the fully unrolled reduction, present only when the block has `2 * s`
/// threads (`B` is a const generic, so the test folds away at compile time).
#[inline(always)]
unsafe fn unrolled_step<O: ReduceOp, const B: u32>(sdata: *mut O::Acc, s: u32) {
    if B >= 2 * s {
        let tid = thread_idx_x();
        if tid < s {
            *sdata.add(tid as usize) = O::combine(*sdata.add(tid as usize), *sdata.add((tid + s) as usize));
        }
        sync_threads();
    }
}

/// Step 6: complete unrolling with the block size as a const generic (the seeds' C++
/// templates): no loop, no loop-carried stride. Limit: still one or two elements per thread.
pub unsafe fn complete_unroll<O: ReduceOp, const B: u32>(input: &[O::Acc], _grain: u32) -> O::Acc {
    let sdata = load_two::<O, B>(input);
    tree_unrolled::<O, B>(sdata);
    tree_result::<O>(sdata)
}

/// The fully unrolled tree over `sdata[0..B]`, result in `sdata[0]`.
#[inline(always)]
pub(super) unsafe fn tree_unrolled<O: ReduceOp, const B: u32>(sdata: *mut O::Acc) {
    unrolled_step::<O, B>(sdata, 512);
    unrolled_step::<O, B>(sdata, 256);
    unrolled_step::<O, B>(sdata, 128);
    unrolled_step::<O, B>(sdata, 64);
    if thread_idx_x() < 32 {
        warp_tail::<O>(sdata);
    }
}
