//! How min, max and minmax fold their elements, with packed forms where they pay:
//! - Bytes (minmax): a byte b becomes the f16 with bits `0x6400 | b` (= 1024 + b, exact and
//!   order-preserving; i8 flips the sign bit first), two per 32-bit word through one `prmt`, and
//!   `min.f16x2`/`max.f16x2` fold them. Per word: two `prmt` and four packed min/max instead of
//!   four extractions and eight min/max.
//! - f16 and bf16 (min, max, minmax): `min.NaN`/`max.NaN` on both halves of a word at once
//!   (`.f16x2`, `.bf16x2`), a tree over the batch's sixteen words, then the two halves.
//!
//! Other types fold one element at a time.
use crate::config::MinMax as Pair;
use crate::ops::{Element, Fold, Max, Min, MinMax, Ordered};
use half::{bf16, f16};

/// An element type whose min, max and minmax fold a batch of four 16-byte vectors at once.
pub trait PackedMinMax: Ordered + Element {
    /// See [`Fold::PREFETCH`] (minmax only): the packed byte forms spend about 100 instructions
    /// per batch.
    const PREFETCH: bool = false;
    /// The minimum of `acc` and every element of the four vectors.
    #[inline(always)]
    fn min_vec4(mut acc: Self, v: &[[u32; 4]; 4]) -> Self {
        for j in 0..4 {
            for k in 0..Self::PER_VEC {
                acc = Self::min2(acc, Self::lane(&v[j], k));
            }
        }
        acc
    }
    /// The maximum of `acc` and every element of the four vectors.
    #[inline(always)]
    fn max_vec4(mut acc: Self, v: &[[u32; 4]; 4]) -> Self {
        for j in 0..4 {
            for k in 0..Self::PER_VEC {
                acc = Self::max2(acc, Self::lane(&v[j], k));
            }
        }
        acc
    }
    /// (min, max) of `acc` and every element of the four vectors.
    #[inline(always)]
    fn minmax_vec4(mut acc: Pair<Self>, v: &[[u32; 4]; 4]) -> Pair<Self> {
        for j in 0..4 {
            for k in 0..Self::PER_VEC {
                let e = Self::lane(&v[j], k);
                acc = Pair { min: Self::min2(acc.min, e), max: Self::max2(acc.max, e) };
            }
        }
        acc
    }
}
impl PackedMinMax for u16 {}
impl PackedMinMax for i16 {}
impl PackedMinMax for u32 {}
impl PackedMinMax for i32 {}
impl PackedMinMax for f32 {}
impl PackedMinMax for f64 {}

/// `prmt.b32`: bytes of (a, b) picked by the nibbles of `sel`.
#[inline(always)]
fn prmt(a: u32, b: u32, sel: u32) -> u32 {
    let d: u32;
    unsafe {
        asm!("prmt.b32 {0}, {1}, {2}, {3};", out(reg32) d, in(reg32) a, in(reg32) b, in(reg32) sel,
             options(pure, nomem, nostack));
    }
    d
}

#[inline(always)]
fn min_f16x2(a: u32, b: u32) -> u32 {
    let d: u32;
    unsafe {
        asm!("min.f16x2 {0}, {1}, {2};", out(reg32) d, in(reg32) a, in(reg32) b, options(pure, nomem, nostack));
    }
    d
}

#[inline(always)]
fn max_f16x2(a: u32, b: u32) -> u32 {
    let d: u32;
    unsafe {
        asm!("max.f16x2 {0}, {1}, {2};", out(reg32) d, in(reg32) a, in(reg32) b, options(pure, nomem, nostack));
    }
    d
}

/// The exponent byte of 1024 + b in f16.
const HIGH: u32 = 0x6464_6464;
/// Selectors: bytes 0, 2 (even) or 1, 3 (odd) of the word, each under a 0x64 byte.
const EVEN: u32 = 0x4240;
const ODD: u32 = 0x4341;

/// (min, max) of the unsigned bytes `lo`, `hi` seeds and of the bytes of `v` after `flip` (xor).
#[inline(always)]
fn byte_minmax(lo: u8, hi: u8, v: &[[u32; 4]; 4], flip: u32) -> (u8, u8) {
    let mut mn = 0x6400_6400 | (lo as u32 * 0x0001_0001);
    let mut mx = 0x6400_6400 | (hi as u32 * 0x0001_0001);
    for j in 0..4 {
        for k in 0..4 {
            let word = v[j][k] ^ flip;
            let (e, o) = (prmt(word, HIGH, EVEN), prmt(word, HIGH, ODD));
            mn = min_f16x2(mn, min_f16x2(e, o));
            mx = max_f16x2(mx, max_f16x2(e, o));
        }
    }
    // Fold the two halves (swap them with prmt), then the low byte is the result.
    mn = min_f16x2(mn, prmt(mn, 0, 0x1032));
    mx = max_f16x2(mx, prmt(mx, 0, 0x1032));
    (mn as u8, mx as u8)
}

/// The largest (`MAX`) or smallest byte of the 16-byte vector `w`, its bytes taken after `flip`
/// (xor; 0x80 per byte orders i8 as unsigned): two `prmt` and two packed max (or min) per word.
#[inline(always)]
pub fn byte_vec_extreme<const MAX: bool>(w: &[u32; 4], flip: u32) -> u8 {
    let op = |a: u32, b: u32| if MAX { max_f16x2(a, b) } else { min_f16x2(a, b) };
    let pair = |k: usize| {
        let word = w[k] ^ flip;
        op(prmt(word, HIGH, EVEN), prmt(word, HIGH, ODD))
    };
    let acc = op(op(pair(0), pair(1)), op(pair(2), pair(3)));
    op(acc, prmt(acc, 0, 0x1032)) as u8
}

impl PackedMinMax for u8 {
    const PREFETCH: bool = true;
    #[inline(always)]
    fn minmax_vec4(acc: Pair<u8>, v: &[[u32; 4]; 4]) -> Pair<u8> {
        let (min, max) = byte_minmax(acc.min, acc.max, v, 0);
        Pair { min, max }
    }
}

impl PackedMinMax for i8 {
    const PREFETCH: bool = true;
    #[inline(always)]
    fn minmax_vec4(acc: Pair<i8>, v: &[[u32; 4]; 4]) -> Pair<i8> {
        let (min, max) = byte_minmax(acc.min as u8 ^ 0x80, acc.max as u8 ^ 0x80, v, 0x8080_8080);
        Pair { min: (min ^ 0x80) as i8, max: (max ^ 0x80) as i8 }
    }
}

/// `$inst`, a packed min or max of two halves per word.
macro_rules! op_x2 {
    ($inst:literal, $a:expr, $b:expr) => {{
        let d: u32;
        unsafe {
            asm!(concat!($inst, " {0}, {1}, {2};"), out(reg32) d, in(reg32) $a, in(reg32) $b, options(pure, nomem, nostack));
        }
        d
    }};
}

/// Folds `seed` and the 32 halves of `v` with the packed `op`: a tree over the sixteen words
/// (four levels, not a chain of sixteen), then the seed, then the word's two halves.
#[inline(always)]
fn fold_halves(seed: u16, v: &[[u32; 4]; 4], op: impl Fn(u32, u32) -> u32) -> u16 {
    let mut w = [0u32; 8];
    for k in 0..8 {
        w[k] = op(v[k / 4][k % 4], v[2 + k / 4][k % 4]);
    }
    for k in 0..4 {
        w[k] = op(w[k], w[k + 4]);
    }
    let r = op(op(w[0], w[2]), op(w[1], w[3]));
    let r = op(r, seed as u32 * 0x0001_0001);
    op(r, r.rotate_left(16)) as u16
}

macro_rules! packed_half {
    ($($t:ident: $min:literal, $max:literal;)*) => {$(
        impl PackedMinMax for $t {
            #[inline(always)]
            fn min_vec4(acc: $t, v: &[[u32; 4]; 4]) -> $t {
                $t::from_bits(fold_halves(acc.to_bits(), v, |a, b| op_x2!($min, a, b)))
            }
            #[inline(always)]
            fn max_vec4(acc: $t, v: &[[u32; 4]; 4]) -> $t {
                $t::from_bits(fold_halves(acc.to_bits(), v, |a, b| op_x2!($max, a, b)))
            }
            #[inline(always)]
            fn minmax_vec4(acc: Pair<$t>, v: &[[u32; 4]; 4]) -> Pair<$t> {
                Pair { min: Self::min_vec4(acc.min, v), max: Self::max_vec4(acc.max, v) }
            }
        }
    )*};
}
packed_half! {
    f16: "min.NaN.f16x2", "max.NaN.f16x2";
    bf16: "min.NaN.bf16x2", "max.NaN.bf16x2";
}

impl<T: PackedMinMax> Fold<T> for Min<T> {
    #[inline(always)]
    fn fold(acc: T, e: T) -> T {
        T::min2(acc, e)
    }
    #[inline(always)]
    fn fold_vec4(acc: T, v: &[[u32; 4]; 4]) -> T {
        T::min_vec4(acc, v)
    }
}

impl<T: PackedMinMax> Fold<T> for Max<T> {
    #[inline(always)]
    fn fold(acc: T, e: T) -> T {
        T::max2(acc, e)
    }
    #[inline(always)]
    fn fold_vec4(acc: T, v: &[[u32; 4]; 4]) -> T {
        T::max_vec4(acc, v)
    }
}

impl<T: PackedMinMax> Fold<T> for MinMax<T> {
    const PREFETCH: bool = T::PREFETCH;
    #[inline(always)]
    fn fold(acc: Pair<T>, e: T) -> Pair<T> {
        Pair { min: T::min2(acc.min, e), max: T::max2(acc.max, e) }
    }
    #[inline(always)]
    fn fold_vec4(acc: Pair<T>, v: &[[u32; 4]; 4]) -> Pair<T> {
        T::minmax_vec4(acc, v)
    }
}
