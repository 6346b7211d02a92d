//! Step 7: several elements per thread before the unrolled tree (Brent's theorem: fewer,
//! busier threads). The grain (elements per thread) sets the grid: ceil(n / (B * grain)).
use super::tree::{tree_result, tree_scratch};
use super::unrolled::tree_unrolled;
use crate::block::sync_threads;
use crate::ops::ReduceOp;
use crate::thread::{block_index, grid_blocks};
use cuda_std::thread::thread_idx_x;

#[inline(always)]
unsafe fn store_and_tree<O: ReduceOp, const B: u32>(v: O::Acc) -> O::Acc {
    let sdata = tree_scratch::<O::Acc>();
    *sdata.add(thread_idx_x() as usize) = v;
    sync_threads();
    tree_unrolled::<O, B>(sdata);
    tree_result::<O>(sdata)
}

/// Global stride: thread `t` of block `b` reads `i = b*2B + t` and `i + B`, then steps by
/// the whole grid (`2B * gridDim`), as in Harris's final kernel. Coalesced across the grid.
pub unsafe fn global_stride<O: ReduceOp, const B: u32>(input: &[O::Acc], _grain: u32) -> O::Acc {
    let n = input.len();
    // 64-bit: n, and the grid's span (grain 1 ⇒ n / 2B blocks), may pass 2^32.
    let step = (2 * B) as usize * grid_blocks();
    let mut i = block_index() * (2 * B) as usize + thread_idx_x() as usize;
    let mut v = O::identity();
    while i < n {
        v = O::combine(v, input[i]);
        if i + (B as usize) < n {
            v = O::combine(v, input[i + B as usize]);
        }
        i += step;
    }
    store_and_tree::<O, B>(v)
}

/// Local stride: block `b` owns the contiguous chunk `[b*B*grain, (b+1)*B*grain)` and its
/// threads walk it with step B, so each block streams one region of memory.
pub unsafe fn local_stride<O: ReduceOp, const B: u32>(input: &[O::Acc], grain: u32) -> O::Acc {
    let n = input.len();
    let chunk = B as usize * grain as usize;
    let start = block_index() * chunk;
    let end = core::cmp::min(start + chunk, n);
    let mut i = start + thread_idx_x() as usize;
    let mut v = O::identity();
    while i < end {
        v = O::combine(v, input[i]);
        i += B as usize;
    }
    store_and_tree::<O, B>(v)
}
