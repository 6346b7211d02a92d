//! Half-precision elements, f16 and bf16: widening to f32 and ordering.
//!
//! Only their bits are used (no software conversion): f16 widens with the PTX `cvt.f32.f16`
//! (exact), bf16 by a 16-bit shift (its bits are the upper half of the f32's). min/max use the
//! hardware `min.NaN`/`max.NaN` forms (sm_80, PTX ISA 7.0), which follow the library's rule
//! (PTX ISA, half-precision `min`/`max`): NaN if either input is NaN (the canonical NaN),
//! +0.0 above -0.0, ±inf ordinary, subnormals kept (no `.ftz`).
use crate::ops::{Element, Fold, Ordered, Sum};
use half::{bf16, f16};

/// A 16-bit float element that widens exactly to f32.
pub trait HalfFloat: Element + Ordered {
    fn widen(self) -> f32;
    /// The two halves of a 32-bit word (low, high), widened.
    fn widen_pair(w: u32) -> [f32; 2];
}

impl HalfFloat for f16 {
    #[inline(always)]
    fn widen(self) -> f32 {
        let d: u32;
        unsafe {
            asm!("cvt.f32.f16 {0}, {1};", out(reg32) d, in(reg16) self.to_bits(), options(pure, nomem, nostack));
        }
        f32::from_bits(d)
    }
    #[inline(always)]
    fn widen_pair(w: u32) -> [f32; 2] {
        let (lo, hi): (u32, u32);
        unsafe {
            asm!("{{ .reg .b16 l, h; mov.b32 {{l, h}}, {2}; cvt.f32.f16 {0}, l; cvt.f32.f16 {1}, h; }}",
                 out(reg32) lo, out(reg32) hi, in(reg32) w, options(pure, nomem, nostack));
        }
        [f32::from_bits(lo), f32::from_bits(hi)]
    }
}

impl HalfFloat for bf16 {
    #[inline(always)]
    fn widen(self) -> f32 {
        f32::from_bits((self.to_bits() as u32) << 16)
    }
    #[inline(always)]
    fn widen_pair(w: u32) -> [f32; 2] {
        [f32::from_bits(w << 16), f32::from_bits(w & 0xffff_0000)]
    }
}

/// `$inst` (a 16-bit min or max) on the bits of `a` and `b`.
macro_rules! op16 {
    ($inst:literal, $t:ident, $a:expr, $b:expr) => {{
        let d: u16;
        unsafe {
            asm!(concat!($inst, " {0}, {1}, {2};"), out(reg16) d, in(reg16) $a.to_bits(), in(reg16) $b.to_bits(),
                 options(pure, nomem, nostack));
        }
        $t::from_bits(d)
    }};
}

macro_rules! ordered_half {
    ($($t:ident: $min:literal, $max:literal;)*) => {$(
        impl Ordered for $t {
            const HIGHEST: Self = $t::INFINITY;
            const LOWEST: Self = $t::NEG_INFINITY;
            #[inline(always)]
            fn min2(a: Self, b: Self) -> Self {
                op16!($min, $t, a, b)
            }
            #[inline(always)]
            fn max2(a: Self, b: Self) -> Self {
                op16!($max, $t, a, b)
            }
        }
    )*};
}
ordered_half! {
    f16: "min.NaN.f16", "max.NaN.f16";
    bf16: "min.NaN.bf16", "max.NaN.bf16";
}

/// Sums widen every half to f32. A vector's eight add as a tree of pairs and a batch's four
/// vectors as a tree of those (short dependency chains, one fixed order), then into `acc`.
impl<E: HalfFloat> Fold<E> for Sum<f32> {
    #[inline(always)]
    fn fold(acc: f32, e: E) -> f32 {
        acc + e.widen()
    }
    #[inline(always)]
    fn fold_vec(acc: f32, w: &[u32; 4]) -> f32 {
        acc + vector_sum::<E>(w)
    }
    #[inline(always)]
    fn fold_vec4(acc: f32, v: &[[u32; 4]; 4]) -> f32 {
        let s = [vector_sum::<E>(&v[0]), vector_sum::<E>(&v[1]), vector_sum::<E>(&v[2]), vector_sum::<E>(&v[3])];
        acc + ((s[0] + s[1]) + (s[2] + s[3]))
    }
}

/// The eight halves of one 16-byte vector, widened and added as a tree of pairs.
#[inline(always)]
fn vector_sum<E: HalfFloat>(w: &[u32; 4]) -> f32 {
    let p = [E::widen_pair(w[0]), E::widen_pair(w[1]), E::widen_pair(w[2]), E::widen_pair(w[3])];
    ((p[0][0] + p[0][1]) + (p[1][0] + p[1][1])) + ((p[2][0] + p[2][1]) + (p[3][0] + p[3][1]))
}
