//! Arg operators: argmin, argmax and argminmax as reductions over (value, index) pairs.
//!
//! Order: integers as usual; floats by IEEE 754 total order except that every NaN is the
//! extreme for both directions (above +inf for argmax, below -inf for argmin), and -0.0 is
//! below +0.0 — the order of [`super::Ordered`]'s min/max, so an argmax's value is the max's.
//! Ties (equal keys, all NaNs equal) go to the smallest index: the first NaN wins, as in
//! `torch.argmax`.
use super::{Element, Ordered, ReduceOp};
use crate::config::{MinMax as Pair, ValueIndex};
use crate::shuffle::Shuffle;
use core::marker::PhantomData;

/// The index of a pair that holds no element yet: above every real index, so it loses ties.
pub const NO_INDEX: u64 = u64::MAX;

/// An element type the arg operators order: a comparison key per direction.
pub trait ArgElement: Ordered + Element {
    /// Ordered as the element, NaN above everything (argmax's key).
    type Key: PartialOrd + Copy;
    fn max_key(self) -> Self::Key;
    /// The same, NaN below everything (argmin's key).
    fn min_key(self) -> Self::Key;
}

macro_rules! arg_int {
    ($($t:ty),*) => {$(
        impl ArgElement for $t {
            type Key = $t;
            #[inline(always)]
            fn max_key(self) -> $t { self }
            #[inline(always)]
            fn min_key(self) -> $t { self }
        }
    )*};
}
arg_int!(u8, i8, u16, i16, u32, i32);

/// Floats keyed by their bits as a signed integer, negatives' magnitude bits flipped: IEEE
/// total order (-0.0 below +0.0); NaN then mapped to the key's extreme.
macro_rules! arg_float {
    ($($t:ty => $k:ty, $u:ty);*) => {$(
        impl ArgElement for $t {
            type Key = $k;
            #[inline(always)]
            fn max_key(self) -> $k {
                if self != self { <$k>::MAX } else { total_key!(self, $k, $u) }
            }
            #[inline(always)]
            fn min_key(self) -> $k {
                if self != self { <$k>::MIN } else { total_key!(self, $k, $u) }
            }
        }
    )*};
}
macro_rules! total_key {
    ($v:expr, $k:ty, $u:ty) => {{
        let s = $v.to_bits() as $k;
        s ^ (((s >> (<$k>::BITS - 1)) as $u) >> 1) as $k
    }};
}
arg_float!(f32 => i32, u32; f64 => i64, u64);

/// Which end an arg operator looks for.
pub trait Direction<T: ArgElement> {
    /// The value a pair with no element starts from (the direction's identity).
    const START: T;
    /// Whether `a` is strictly further toward this end than `b`.
    fn beats(a: T, b: T) -> bool;
    /// The extreme of one 16-byte vector's elements, in the order of `beats`.
    fn vec_extreme(w: &[u32; 4]) -> T;
}

/// argmax's direction.
pub struct Largest;
/// argmin's direction.
pub struct Smallest;

impl<T: ArgElement> Direction<T> for Largest {
    const START: T = T::LOWEST;
    #[inline(always)]
    fn beats(a: T, b: T) -> bool {
        a.max_key() > b.max_key()
    }
    #[inline(always)]
    fn vec_extreme(w: &[u32; 4]) -> T {
        let mut m = T::lane(w, 0);
        for k in 1..T::PER_VEC {
            m = T::max2(m, T::lane(w, k));
        }
        m
    }
}
impl<T: ArgElement> Direction<T> for Smallest {
    const START: T = T::HIGHEST;
    #[inline(always)]
    fn beats(a: T, b: T) -> bool {
        a.min_key() < b.min_key()
    }
    #[inline(always)]
    fn vec_extreme(w: &[u32; 4]) -> T {
        let mut m = T::lane(w, 0);
        for k in 1..T::PER_VEC {
            m = T::min2(m, T::lane(w, k));
        }
        m
    }
}

/// The pair of the two that wins in direction `D`: the further value, else the smaller index.
#[inline(always)]
pub fn pick<T: ArgElement, D: Direction<T>>(a: ValueIndex<T>, b: ValueIndex<T>) -> ValueIndex<T> {
    if D::beats(b.value, a.value) || (!D::beats(a.value, b.value) && b.index < a.index) {
        b
    } else {
        a
    }
}

/// The arg reduction toward `D`'s end; see [`ArgMax`] and [`ArgMin`].
pub struct ArgOf<T, D>(PhantomData<(T, D)>);
/// (max value, its first index).
pub type ArgMax<T> = ArgOf<T, Largest>;
/// (min value, its first index).
pub type ArgMin<T> = ArgOf<T, Smallest>;
/// Both: `MinMax { min: argmin, max: argmax }`.
pub struct ArgMinMax<T>(PhantomData<T>);

impl<T: ArgElement, D: Direction<T>> ReduceOp for ArgOf<T, D> {
    type Acc = ValueIndex<T>;
    #[inline(always)]
    fn identity() -> ValueIndex<T> {
        ValueIndex { value: D::START, index: NO_INDEX }
    }
    #[inline(always)]
    fn combine(a: ValueIndex<T>, b: ValueIndex<T>) -> ValueIndex<T> {
        pick::<T, D>(a, b)
    }
}

impl<T: ArgElement> ReduceOp for ArgMinMax<T> {
    type Acc = Pair<ValueIndex<T>>;
    #[inline(always)]
    fn identity() -> Self::Acc {
        Pair { min: ArgMin::<T>::identity(), max: ArgMax::<T>::identity() }
    }
    #[inline(always)]
    fn combine(a: Self::Acc, b: Self::Acc) -> Self::Acc {
        Pair { min: pick::<T, Smallest>(a.min, b.min), max: pick::<T, Largest>(a.max, b.max) }
    }
}

impl<T: Shuffle> Shuffle for ValueIndex<T> {
    #[inline(always)]
    unsafe fn shfl_xor(self, mask: u32) -> Self {
        ValueIndex { value: self.value.shfl_xor(mask), index: self.index.shfl_xor(mask) }
    }
}
