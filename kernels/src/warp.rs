//! Warp level: register shuffles through `shfl.sync` (`cuda_std 0.2.2` has none, so `asm!`).
use crate::ops::ReduceOp;

const FULL_MASK: u32 = 0xffff_ffff;

/// Value exchanged between lanes with `shfl.sync.bfly` (butterfly: lane ^ `mask`).
pub trait Shuffle: Copy {
    unsafe fn shfl_xor(self, mask: u32) -> Self;
}

#[inline(always)]
pub unsafe fn shfl_xor_b32(v: u32, mask: u32) -> u32 {
    let out: u32;
    asm!("shfl.sync.bfly.b32 {0}, {1}, {2}, 0x1f, 0xffffffff;", out(reg32) out, in(reg32) v, in(reg32) mask);
    out
}

macro_rules! shuffle_via_u32 {
    ($($t:ty => |$v:ident| $to:expr, |$w:ident| $from:expr;)*) => {$(
        impl Shuffle for $t {
            #[inline(always)]
            unsafe fn shfl_xor(self, mask: u32) -> Self {
                let $v = self;
                let $w = shfl_xor_b32($to, mask);
                $from
            }
        }
    )*};
}
shuffle_via_u32! {
    u8 => |v| v as u32, |w| w as u8;
    i8 => |v| v as u32, |w| w as i8;
    u16 => |v| v as u32, |w| w as u16;
    i16 => |v| v as u32, |w| w as i16;
    u32 => |v| v, |w| w;
    i32 => |v| v as u32, |w| w as i32;
    f32 => |v| v.to_bits(), |w| f32::from_bits(w);
}

macro_rules! shuffle_via_2xu32 {
    ($($t:ty => |$v:ident| $to:expr, |$w:ident| $from:expr;)*) => {$(
        impl Shuffle for $t {
            #[inline(always)]
            unsafe fn shfl_xor(self, mask: u32) -> Self {
                let $v = self;
                let bits: u64 = $to;
                let lo = shfl_xor_b32(bits as u32, mask) as u64;
                let hi = shfl_xor_b32((bits >> 32) as u32, mask) as u64;
                let $w = lo | (hi << 32);
                $from
            }
        }
    )*};
}
shuffle_via_2xu32! {
    u64 => |v| v, |w| w;
    i64 => |v| v as u64, |w| w as i64;
    f64 => |v| v.to_bits(), |w| f64::from_bits(w);
}

impl<T: Shuffle> Shuffle for crate::config::MinMax<T> {
    #[inline(always)]
    unsafe fn shfl_xor(self, mask: u32) -> Self {
        crate::config::MinMax { min: self.min.shfl_xor(mask), max: self.max.shfl_xor(mask) }
    }
}

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
