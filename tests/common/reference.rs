//! CPU reference semantics of the typed element types (u8…f64): random values, extremes, the
//! library's min/max (NaN propagates, -0.0 below +0.0) and sums (wider accumulators).
use super::{Rng, U32, U64};
use cudakernels::TypedElement;

/// CPU reference semantics, shared by every type.
pub trait Reference: TypedElement + PartialOrd {
    fn random(rng: &mut Rng) -> Self;
    /// Values that must appear: MIN and MAX (and for floats the special values).
    fn extremes() -> Vec<Self>;
    fn same(self, other: Self) -> bool;
    fn ref_min(a: Self, b: Self) -> Self;
    fn ref_max(a: Self, b: Self) -> Self;
    fn ref_sum(v: &[Self]) -> Self::Sum;
    fn sum_ok(got: Self::Sum, v: &[Self]) -> bool;
    /// [`Reference::sum_ok`] for a summation whose longest chain of additions is `depth` deep
    /// (exact for integers).
    fn sum_ok_depth(got: Self::Sum, v: &[Self], depth: usize) -> bool;
}

macro_rules! int_reference {
    ($($t:ty => $acc:ty),*) => {$(
        impl Reference for $t {
            fn random(rng: &mut Rng) -> Self { rng.next_u64() as $t }
            fn extremes() -> Vec<Self> { vec![<$t>::MIN, <$t>::MAX] }
            fn same(self, other: Self) -> bool { self == other }
            fn ref_min(a: Self, b: Self) -> Self { a.min(b) }
            fn ref_max(a: Self, b: Self) -> Self { a.max(b) }
            fn ref_sum(v: &[Self]) -> $acc { v.iter().fold(0 as $acc, |s, &x| s.wrapping_add(x as $acc)) }
            fn sum_ok(got: $acc, v: &[Self]) -> bool { got == Self::ref_sum(v) }
            fn sum_ok_depth(got: $acc, v: &[Self], _depth: usize) -> bool { got == Self::ref_sum(v) }
        }
    )*};
}
int_reference!(u8 => u64, i8 => i64, u16 => u64, i16 => i64, i32 => i64, u32 => u64);

macro_rules! float_reference {
    ($($t:ty, $u:expr);*) => {$(
        impl Reference for $t {
            fn random(rng: &mut Rng) -> Self { rng.range(-1000.0, 1000.0) as $t }
            fn extremes() -> Vec<Self> { vec![<$t>::MIN, <$t>::MAX, -0.0, 0.0] }
            /// Bit-equal, except any NaN matches any NaN.
            fn same(self, other: Self) -> bool { (self.is_nan() && other.is_nan()) || self.to_bits() == other.to_bits() }
            /// IEEE 754-2019 minimum: NaN propagates, -0.0 < +0.0.
            fn ref_min(a: Self, b: Self) -> Self {
                if a.is_nan() || b.is_nan() { <$t>::NAN }
                else if a == b { if a.is_sign_negative() { a } else { b } }
                else if a < b { a } else { b }
            }
            fn ref_max(a: Self, b: Self) -> Self {
                if a.is_nan() || b.is_nan() { <$t>::NAN }
                else if a == b { if a.is_sign_positive() { a } else { b } }
                else if a > b { a } else { b }
            }
            fn ref_sum(v: &[Self]) -> $t { v.iter().map(|&x| x as f64).sum::<f64>() as $t }
            fn sum_ok(got: $t, v: &[Self]) -> bool {
                // per-thread chain (a few vectors), block tree, grid tree: depth well under 256
                Self::sum_ok_depth(got, v, 256)
            }
            /// Any order of n additions errs by at most depth·u·Σ|x| (first order).
            fn sum_ok_depth(got: $t, v: &[Self], depth: usize) -> bool {
                let want: f64 = v.iter().map(|&x| x as f64).sum();
                if !want.is_finite() {
                    return (want.is_nan() && got.is_nan()) || got as f64 == want;
                }
                let abs: f64 = v.iter().map(|&x| (x as f64).abs()).sum();
                (got as f64 - want).abs() <= 2.0 * depth as f64 * $u * abs
            }
        }
    )*};
}
float_reference!(f32, U32; f64, U64);

/// f16 and bf16: compared through f32 (exact), sums accumulated in f32.
macro_rules! half_reference {
    ($($t:ident),*) => {$(
        impl Reference for cudakernels::$t {
            fn random(rng: &mut Rng) -> Self { Self::from_f64(rng.range(-1000.0, 1000.0)) }
            fn extremes() -> Vec<Self> { vec![Self::MIN, Self::MAX, Self::NEG_ZERO, Self::ZERO] }
            fn same(self, other: Self) -> bool { (self.is_nan() && other.is_nan()) || self.to_bits() == other.to_bits() }
            fn ref_min(a: Self, b: Self) -> Self {
                Self::from_f32(f32::ref_min(a.to_f32(), b.to_f32()))
            }
            fn ref_max(a: Self, b: Self) -> Self {
                Self::from_f32(f32::ref_max(a.to_f32(), b.to_f32()))
            }
            fn ref_sum(v: &[Self]) -> f32 { v.iter().map(|x| x.to_f64()).sum::<f64>() as f32 }
            fn sum_ok(got: f32, v: &[Self]) -> bool { Self::sum_ok_depth(got, v, 256) }
            fn sum_ok_depth(got: f32, v: &[Self], depth: usize) -> bool {
                let wide: Vec<f32> = v.iter().map(|x| x.to_f32()).collect();
                f32::sum_ok_depth(got, &wide, depth)
            }
        }
    )*};
}
half_reference!(f16, bf16);
