//! Warp level: reductions across lanes through register shuffles ([`crate::shuffle`]).
use crate::ops::{ReduceOp, Sum};
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

/// Sums four values per lane over the warp, leaving value j's total in lanes 8j … 8j + 7:
/// halving exchanges (lane ^ 16, then ^ 8) hand off half the values each, then three butterfly
/// steps finish each lane's one value. Six shuffles instead of twenty; fixed order, so
/// deterministic. The whole warp must call it.
#[inline(always)]
pub unsafe fn reduce_scatter4(v: [f32; 4]) -> f32 {
    let l = lane();
    let hi = l & 16 != 0;
    let (keep, send) = if hi { ([v[2], v[3]], [v[0], v[1]]) } else { ([v[0], v[1]], [v[2], v[3]]) };
    let pair = [keep[0] + send[0].shfl_xor(16), keep[1] + send[1].shfl_xor(16)];
    let b3 = l & 8 != 0;
    let (keep, send) = if b3 { (pair[1], pair[0]) } else { (pair[0], pair[1]) };
    let mut s = keep + send.shfl_xor(8);
    s += s.shfl_xor(4);
    s += s.shfl_xor(2);
    s += s.shfl_xor(1);
    s
}

/// [`segment_reduce`] over groups of `lanes` lanes chosen at run time (a power of two ≤ 32,
/// the same in every lane): every lane of a group ends with the group's result. The whole warp
/// must call it.
#[inline(always)]
pub unsafe fn group_reduce<O: ReduceOp>(mut v: O::Acc, lanes: u32) -> O::Acc {
    let mut mask = lanes / 2;
    while mask > 0 {
        v = O::combine(v, v.shfl_xor(mask));
        mask /= 2;
    }
    v
}

/// `if c { a } else { b }` as one `selp`. Written as a select, this codegen may branch on `c`
/// instead, and with the shuffles after it copied into both arms, a warp whose lanes differ in
/// `c` runs each arm's shuffles in turn.
#[inline(always)]
fn select(c: bool, a: f32, b: f32) -> f32 {
    let r: f32;
    unsafe {
        asm!("{{ .reg .pred p; setp.ne.u32 p, {c}, 0; selp.f32 {r}, {a}, {b}, p; }}",
             r = out(reg32) r, c = in(reg32) c as u32, a = in(reg32) a, b = in(reg32) b,
             options(pure, nomem, nostack));
    }
    r
}

/// The sums of `K` values (a power of two ≤ `lanes`) over each group of `lanes` lanes (a power
/// of two ≤ 32, the same in every lane), spread over the group: returns (the sum of value k,
/// k), where k is read from lane bits `lanes / 2`, `lanes / 4`, …, `lanes / K` of this lane (the
/// first the highest); the lanes that differ below bit `lanes / K` hold the same sums. Each
/// step keeps half of its values and sends the other half, so the K sums take K − 1 + log2(lanes / K)
/// shuffles instead of K · log2(lanes), independent ones issued together. Fixed order:
/// the result does not depend on timing. The whole warp must call it.
#[inline(always)]
pub unsafe fn group_sums<const K: usize>(mut v: [f32; K], lanes: u32) -> (f32, usize) {
    let sub = lane() % lanes;
    let mut mask = lanes / 2;
    let mut k = 0;
    let mut half = K / 2;
    for _ in 0..K.trailing_zeros() {
        let upper = sub & mask != 0;
        for j in 0..half {
            let (keep, send) = (select(upper, v[j + half], v[j]), select(upper, v[j], v[j + half]));
            v[j] = keep + send.shfl_xor(mask);
        }
        if upper {
            k += half;
        }
        half /= 2;
        mask /= 2;
    }
    // The lanes below bit `lanes / K` hold parts of the same sum: fold them as one group.
    (group_reduce::<Sum<f32>>(v[0], lanes / K as u32), k)
}
