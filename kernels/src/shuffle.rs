//! Register exchange between lanes: `shfl.sync` through `asm!` (`cuda_std 0.2.2` has none).
//! The lowest layer: the operators name `Shuffle` as a bound, the warp level uses it.

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

/// Lane `lane`'s `v`, in every lane (`shfl.sync.idx`).
#[inline(always)]
pub unsafe fn shfl_idx_b32(v: u32, lane: u32) -> u32 {
    let out: u32;
    asm!("shfl.sync.idx.b32 {0}, {1}, {2}, 0x1f, 0xffffffff;", out(reg32) out, in(reg32) v, in(reg32) lane);
    out
}

/// [`shfl_idx_b32`] of an f32.
#[inline(always)]
pub unsafe fn shfl_idx_f32(v: f32, lane: u32) -> f32 {
    f32::from_bits(shfl_idx_b32(v.to_bits(), lane))
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
    half::f16 => |v| v.to_bits() as u32, |w| half::f16::from_bits(w as u16);
    half::bf16 => |v| v.to_bits() as u32, |w| half::bf16::from_bits(w as u16);
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
