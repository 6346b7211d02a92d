//! Warp level: reductions across lanes through register shuffles ([`crate::shuffle`]).
use crate::ops::ReduceOp;
use crate::shuffle::Shuffle;

const FULL_MASK: u32 = 0xffff_ffff;

/// Reduces across aligned segments of `WIDTH` lanes (a power of two ≤ 32); every lane of a
/// segment ends with the segment's result. The whole warp must call it.
#[inline(always)]
pub unsafe fn segment_reduce<O: ReduceOp, const WIDTH: u32>(mut v: O::Acc) -> O::Acc {
    let mut mask = WIDTH / 2;
    while mask > 0 {
        v = O::combine(v, v.shfl_xor(mask));
        mask /= 2;
    }
    v
}

/// Reduces across the whole warp; every lane ends with the result.
#[inline(always)]
pub unsafe fn reduce<O: ReduceOp>(v: O::Acc) -> O::Acc {
    segment_reduce::<O, 32>(v)
}

/// Lane index within the warp.
#[inline(always)]
pub fn lane() -> u32 {
    cuda_std::thread::thread_idx_x() % crate::config::WARP_SIZE
}

/// Warp barrier for the full warp (`bar.warp.sync`), needed between warp-synchronous
/// shared-memory steps on Volta and later.
#[inline(always)]
pub unsafe fn sync() {
    cuda_std::warp::sync_warp(FULL_MASK)
}
