//! The order of the arg reductions, shared by the kernels and the host (which folds the blocks'
//! pairs of a small value call): a comparison key per element and direction.
//!
//! Integers order as usual. Floats follow IEEE 754 total order (-0.0 below +0.0, ±inf ordinary)
//! except that every NaN is the extreme in both directions: above +inf for argmax, below -inf
//! for argmin. Equal keys (all NaNs are equal) go to the smaller index.
use crate::config::ValueIndex;

/// An element type the arg reductions order.
pub trait ArgKey: Copy {
    /// Ordered as the element, with NaN mapped to an end.
    type Key: PartialOrd + Copy;
    /// argmax's key: NaN above everything.
    fn max_key(self) -> Self::Key;
    /// argmin's key: NaN below everything.
    fn min_key(self) -> Self::Key;
    /// [`ArgKey::max_key`] of a value that, if NaN, is the canonical NaN (sign clear, every
    /// other bit set), as PTX's `.NaN` max returns: that NaN's bits are already the top key.
    #[inline(always)]
    fn max_key_canonical(self) -> Self::Key {
        self.max_key()
    }
    /// The element whose key (either direction's) is `k`, or `None` for a NaN's key, which
    /// stands for every NaN (keys of other elements are one to one).
    fn from_key(k: Self::Key) -> Option<Self>;
}

macro_rules! int_keys {
    ($($t:ty),*) => {$(
        impl ArgKey for $t {
            type Key = $t;
            #[inline(always)]
            fn max_key(self) -> $t { self }
            #[inline(always)]
            fn min_key(self) -> $t { self }
            #[inline(always)]
            fn from_key(k: $t) -> Option<$t> { Some(k) }
        }
    )*};
}
int_keys!(u8, i8, u16, i16, u32, i32);

/// Floats keyed by their bits as the signed integer `$k`, negatives' magnitude
/// bits flipped: IEEE total order; NaN then mapped to the key's extreme.
macro_rules! float_keys {
    ($($t:ty => $k:ty);*) => {$(
        impl ArgKey for $t {
            type Key = $k;
            #[inline(always)]
            fn max_key(self) -> $k {
                if self.is_nan() { <$k>::MAX } else { (self.to_bits() as $k).flip_negative() }
            }
            #[inline(always)]
            fn min_key(self) -> $k {
                if self.is_nan() { <$k>::MIN } else { (self.to_bits() as $k).flip_negative() }
            }
            #[inline(always)]
            fn max_key_canonical(self) -> $k {
                (self.to_bits() as $k).flip_negative()
            }
            #[inline(always)]
            fn from_key(k: $k) -> Option<$t> {
                // `flip_negative` is its own inverse; a NaN's key gives back a NaN.
                let v = <$t>::from_bits(k.flip_negative() as _);
                if v.is_nan() { None } else { Some(v) }
            }
        }
    )*};
}
float_keys!(f32 => i32; f64 => i64; half::f16 => i16; half::bf16 => i16);

/// A float's bits as a signed integer, whose magnitude bits flip when negative.
trait SignedBits: Copy {
    fn flip_negative(self) -> Self;
}
macro_rules! signed_bits {
    ($($k:ty),*) => {$(
        impl SignedBits for $k {
            #[inline(always)]
            fn flip_negative(self) -> $k {
                self ^ ((self >> (<$k>::BITS - 1)) & <$k>::MAX)
            }
        }
    )*};
}
signed_bits!(i16, i32, i64);

/// Which end an arg reduction looks for.
pub trait End<T: ArgKey> {
    /// This end's key of `x` ([`ArgKey::max_key`] or [`ArgKey::min_key`]).
    fn key(x: T) -> T::Key;
    /// Whether key `a` is strictly further toward this end than key `b`.
    fn further(a: T::Key, b: T::Key) -> bool;
    /// Whether `a` is strictly further toward this end than `b`.
    #[inline(always)]
    fn beats(a: T, b: T) -> bool {
        Self::further(Self::key(a), Self::key(b))
    }
}

/// argmax's end.
#[derive(Clone, Copy)]
pub struct Largest;
/// argmin's end.
#[derive(Clone, Copy)]
pub struct Smallest;

impl<T: ArgKey> End<T> for Largest {
    #[inline(always)]
    fn key(x: T) -> T::Key {
        x.max_key()
    }
    #[inline(always)]
    fn further(a: T::Key, b: T::Key) -> bool {
        a > b
    }
}
impl<T: ArgKey> End<T> for Smallest {
    #[inline(always)]
    fn key(x: T) -> T::Key {
        x.min_key()
    }
    #[inline(always)]
    fn further(a: T::Key, b: T::Key) -> bool {
        a < b
    }
}

/// The pair of the two that wins toward end `D`: the further value, else the smaller index.
#[inline(always)]
pub fn pick<T: ArgKey, D: End<T>>(a: ValueIndex<T>, b: ValueIndex<T>) -> ValueIndex<T> {
    let take_b = D::beats(b.value, a.value) || (!D::beats(a.value, b.value) && b.index < a.index);
    // Field by field: a select of whole pairs would keep them in local memory on the GPU.
    ValueIndex { value: if take_b { b.value } else { a.value }, index: if take_b { b.index } else { a.index } }
}

#[cfg(all(test, not(target_os = "cuda")))]
mod tests {
    use super::*;

    fn vi<T>(value: T, index: u64) -> ValueIndex<T> {
        ValueIndex { value, index }
    }

    #[test]
    fn float_keys_follow_total_order_with_nan_at_both_ends() {
        let ascending = [f32::NEG_INFINITY, -1.5, -f32::MIN_POSITIVE / 2.0, -0.0, 0.0, 1e-45, 2.0, f32::INFINITY];
        for w in ascending.windows(2) {
            assert!(w[0].max_key() < w[1].max_key() && w[0].min_key() < w[1].min_key(), "{:?}", w);
        }
        for nan in [f32::NAN, -f32::NAN, f32::from_bits(0x7f80_0001)] {
            assert!(nan.max_key() > f32::INFINITY.max_key() && nan.min_key() < f32::NEG_INFINITY.min_key());
        }
        let h = |v: f32| half::bf16::from_f32(v);
        assert!(h(-0.0).max_key() < h(0.0).max_key() && h(-2.0).min_key() < h(-1.0).min_key());
        assert!(half::f16::NAN.max_key() > half::f16::INFINITY.max_key());
        assert!((-0.0f64).min_key() < 0.0f64.min_key() && f64::NAN.min_key() < f64::NEG_INFINITY.min_key());
    }

    #[test]
    fn canonical_nan_keys_need_no_nan_test() {
        // PTX's canonical NaN: sign clear, every exponent and mantissa bit set.
        assert_eq!(f32::from_bits(0x7fff_ffff).max_key_canonical(), f32::NAN.max_key());
        assert_eq!(half::f16::from_bits(0x7fff).max_key_canonical(), half::f16::NAN.max_key());
        assert_eq!(half::bf16::from_bits(0x7fff).max_key_canonical(), half::bf16::NAN.max_key());
        for bits in 0..=u16::MAX {
            let (f, b) = (half::f16::from_bits(bits), half::bf16::from_bits(bits));
            if !f.is_nan() {
                assert_eq!(f.max_key_canonical(), f.max_key(), "{:#x}", bits);
            }
            if !b.is_nan() {
                assert_eq!(b.max_key_canonical(), b.max_key(), "{:#x}", bits);
            }
        }
        let mut x = 0x9e37_79b9u32;
        for _ in 0..100_000 {
            x = x.wrapping_mul(0x0019_660d).wrapping_add(0x3c6e_f35f);
            let v = f32::from_bits(x);
            if !v.is_nan() {
                assert_eq!(v.max_key_canonical(), v.max_key(), "{:#x}", x);
                assert_eq!(v.max_key(), (x as i32) ^ ((((x as i32) >> 31) as u32 >> 1) as i32), "{:#x}", x);
            }
        }
    }

    #[test]
    fn keys_give_back_their_element_except_nans() {
        for bits in 0..=u16::MAX {
            let (f, b) = (half::f16::from_bits(bits), half::bf16::from_bits(bits));
            for (key, nan) in [(f.max_key(), f.is_nan()), (f.min_key(), f.is_nan())] {
                assert_eq!(half::f16::from_key(key).map(|v| v.to_bits()), if nan { None } else { Some(bits) });
            }
            for (key, nan) in [(b.max_key(), b.is_nan()), (b.min_key(), b.is_nan())] {
                assert_eq!(half::bf16::from_key(key).map(|v| v.to_bits()), if nan { None } else { Some(bits) });
            }
        }
        let mut x = 0x2545_f491u32;
        for _ in 0..100_000 {
            x = x.wrapping_mul(0x0019_660d).wrapping_add(0x3c6e_f35f);
            let (v, d) = (f32::from_bits(x), f64::from_bits((x as u64) << 32 | x.rotate_left(7) as u64));
            let want = if v.is_nan() { None } else { Some(x) };
            assert_eq!(f32::from_key(v.max_key()).map(f32::to_bits), want, "{:#x}", x);
            assert_eq!(f32::from_key(v.min_key()).map(f32::to_bits), want, "{:#x}", x);
            let want = if d.is_nan() { None } else { Some(d.to_bits()) };
            assert_eq!(f64::from_key(d.max_key()).map(f64::to_bits), want);
            assert_eq!(f64::from_key(d.min_key()).map(f64::to_bits), want);
        }
        for &k in [i32::MIN, -1, 0, i32::MAX].iter() {
            assert_eq!(i32::from_key(k.max_key()), Some(k));
        }
        assert_eq!(u8::from_key(200u8.min_key()), Some(200));
    }

    #[test]
    fn pick_takes_the_further_value_then_the_first_index() {
        assert_eq!(pick::<i32, Largest>(vi(3, 9), vi(5, 10)), vi(5, 10));
        assert_eq!(pick::<i32, Smallest>(vi(3, 9), vi(5, 1)), vi(3, 9));
        assert_eq!(pick::<u8, Largest>(vi(7, 9), vi(7, 4)), vi(7, 4));
        assert_eq!(pick::<u8, Largest>(vi(7, 4), vi(7, u64::MAX)), vi(7, 4));
        // The first NaN wins both ways, whatever its bits.
        let (a, b) = (vi(f32::from_bits(0x7fc0_0001), 8), vi(-f32::NAN, 3));
        assert_eq!(pick::<f32, Largest>(a, b).index, 3);
        assert_eq!(pick::<f32, Smallest>(a, b).value.to_bits(), (-f32::NAN).to_bits());
        assert_eq!(pick::<f32, Largest>(vi(-0.0, 1), vi(0.0, 2)).index, 2);
        assert_eq!(pick::<f32, Smallest>(vi(-0.0, 2), vi(0.0, 1)).index, 2);
    }
}
