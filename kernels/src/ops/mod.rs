//! Reduction operators and how each element type folds into them.
//!
//! Float min/max propagate NaN (as `torch.aminmax` does) and order -0.0 below +0.0
//! (IEEE 754-2019 `minimum`/`maximum`); f32 uses the hardware `min.NaN.f32`/`max.NaN.f32`, f16
//! and bf16 theirs ([`crate::halves`]).
use crate::config::MinMax as Pair;
use crate::shuffle::Shuffle;
use core::marker::PhantomData;
use half::{bf16, f16};

pub mod arg;

/// An associative reduction: identity and combine on the accumulator type.
pub trait ReduceOp {
    type Acc: Shuffle;
    fn identity() -> Self::Acc;
    fn combine(a: Self::Acc, b: Self::Acc) -> Self::Acc;
    /// Stores a block's partial for other blocks to read (a volatile store).
    #[inline(always)]
    unsafe fn put_partial(p: *mut Self::Acc, v: Self::Acc) {
        core::ptr::write_volatile(p, v)
    }
}

/// An element type as it sits in a 16-byte vector load of four 32-bit words.
pub trait Element: Copy {
    /// Elements per 16-byte vector.
    const PER_VEC: usize;
    /// Element `k` of the vector `w`.
    fn lane(w: &[u32; 4], k: usize) -> Self;
    /// The element's bits, zero-extended (the inverse of [`Element::lane`]).
    fn bits(self) -> u64;
}

/// How one element (and one 16-byte vector of them) folds into an accumulator.
pub trait Fold<E: Element>: ReduceOp {
    /// Whether the vectorized loop issues the next batch's loads before folding this one: for
    /// folds whose arithmetic would otherwise hold the next loads back (byte minmax).
    const PREFETCH: bool = false;
    fn fold(acc: Self::Acc, e: E) -> Self::Acc;
    #[inline(always)]
    fn fold_vec(mut acc: Self::Acc, w: &[u32; 4]) -> Self::Acc {
        for k in 0..E::PER_VEC {
            acc = Self::fold(acc, E::lane(w, k));
        }
        acc
    }
    /// Folds the unrolled loop's batch of four vectors; packed forms override it.
    #[inline(always)]
    fn fold_vec4(mut acc: Self::Acc, v: &[[u32; 4]; 4]) -> Self::Acc {
        for j in 0..4 {
            acc = Self::fold_vec(acc, &v[j]);
        }
        acc
    }
}

macro_rules! element {
    ($($t:ty: $per:expr, |$w:ident, $k:ident| $get:expr, |$x:ident| $bits:expr;)*) => {$(
        impl Element for $t {
            const PER_VEC: usize = $per;
            #[inline(always)]
            fn lane($w: &[u32; 4], $k: usize) -> Self { $get }
            #[inline(always)]
            fn bits($x) -> u64 { $bits }
        }
    )*};
}
element! {
    u8: 16, |w, k| (w[k / 4] >> (8 * (k % 4))) as u8, |self| self as u64;
    i8: 16, |w, k| (w[k / 4] >> (8 * (k % 4))) as i8, |self| self as u8 as u64;
    u16: 8, |w, k| (w[k / 2] >> (16 * (k % 2))) as u16, |self| self as u64;
    i16: 8, |w, k| (w[k / 2] >> (16 * (k % 2))) as i16, |self| self as u16 as u64;
    u32: 4, |w, k| w[k], |self| self as u64;
    i32: 4, |w, k| w[k] as i32, |self| self as u32 as u64;
    f32: 4, |w, k| f32::from_bits(w[k]), |self| self.to_bits() as u64;
    f64: 2, |w, k| f64::from_bits(w[2 * k] as u64 | ((w[2 * k + 1] as u64) << 32)), |self| self.to_bits();
    f16: 8, |w, k| f16::from_bits((w[k / 2] >> (16 * (k % 2))) as u16), |self| self.to_bits() as u64;
    bf16: 8, |w, k| bf16::from_bits((w[k / 2] >> (16 * (k % 2))) as u16), |self| self.to_bits() as u64;
}

// ---- sum ----

/// Sum accumulating in `A` (wrapping for integers).
pub struct Sum<A>(PhantomData<A>);

pub trait Accumulator: Shuffle {
    const ZERO: Self;
    fn add(self, other: Self) -> Self;
}
macro_rules! accumulator {
    (wrapping: $($i:ty),*; float: $($f:ty),*) => {
        $(impl Accumulator for $i {
            const ZERO: Self = 0;
            #[inline(always)]
            fn add(self, other: Self) -> Self { self.wrapping_add(other) }
        })*
        $(impl Accumulator for $f {
            const ZERO: Self = 0.0;
            #[inline(always)]
            fn add(self, other: Self) -> Self { self + other }
        })*
    };
}
accumulator!(wrapping: i32, i64, u64; float: f32, f64);

impl<A: Accumulator> ReduceOp for Sum<A> {
    type Acc = A;
    #[inline(always)]
    fn identity() -> A {
        A::ZERO
    }
    #[inline(always)]
    fn combine(a: A, b: A) -> A {
        a.add(b)
    }
}

macro_rules! sum_fold {
    ($($e:ty => $a:ty),*) => {$(
        impl Fold<$e> for Sum<$a> {
            #[inline(always)]
            fn fold(acc: $a, e: $e) -> $a { acc.add(e as $a) }
        }
    )*};
}
sum_fold!(i32 => i32, f32 => f32, u32 => u64, i32 => i64, f32 => f64, f64 => f64);

const ONES: u32 = 0x0101_0101;

/// Byte and half-word sums use `dp4a`/`dp2a` against ones: one instruction per word.
macro_rules! sum_fold_dp {
    ($($e:ty => $a:ty, $inst:literal, $w32:ty);*) => {$(
        impl Fold<$e> for Sum<$a> {
            #[inline(always)]
            fn fold(acc: $a, e: $e) -> $a { acc.add(e as $a) }
            #[inline(always)]
            fn fold_vec(acc: $a, w: &[u32; 4]) -> $a {
                let mut part: u32 = 0;
                for k in 0..4 {
                    unsafe {
                        asm!(concat!($inst, " {0}, {1}, {2}, {0};"), inout(reg32) part, in(reg32) w[k], in(reg32) ONES,
                             options(pure, nomem, nostack));
                    }
                }
                acc.add(part as $w32 as $a)
            }
        }
    )*};
}
sum_fold_dp!(
    u8 => u64, "dp4a.u32.u32", u32;
    i8 => i64, "dp4a.s32.s32", i32;
    u16 => u64, "dp2a.lo.u32.u32", u32;
    i16 => i64, "dp2a.lo.s32.s32", i32
);

// ---- min / max ----

/// Totally ordered values with identities for min and max.
pub trait Ordered: Shuffle {
    /// Identity of min (the largest value, +inf for floats).
    const HIGHEST: Self;
    /// Identity of max.
    const LOWEST: Self;
    fn min2(a: Self, b: Self) -> Self;
    fn max2(a: Self, b: Self) -> Self;
}
macro_rules! ordered_int {
    ($($t:ty),*) => {$(
        impl Ordered for $t {
            const HIGHEST: Self = <$t>::MAX;
            const LOWEST: Self = <$t>::MIN;
            #[inline(always)]
            fn min2(a: Self, b: Self) -> Self { if b < a { b } else { a } }
            #[inline(always)]
            fn max2(a: Self, b: Self) -> Self { if b > a { b } else { a } }
        }
    )*};
}
ordered_int!(u8, i8, u16, i16, u32, i32);

impl Ordered for f32 {
    const HIGHEST: Self = f32::INFINITY;
    const LOWEST: Self = f32::NEG_INFINITY;
    #[inline(always)]
    fn min2(a: Self, b: Self) -> Self {
        let d: u32;
        unsafe {
            asm!("min.NaN.f32 {0}, {1}, {2};", out(reg32) d, in(reg32) a.to_bits(), in(reg32) b.to_bits(),
                 options(pure, nomem, nostack));
        }
        f32::from_bits(d)
    }
    #[inline(always)]
    fn max2(a: Self, b: Self) -> Self {
        let d: u32;
        unsafe {
            asm!("max.NaN.f32 {0}, {1}, {2};", out(reg32) d, in(reg32) a.to_bits(), in(reg32) b.to_bits(),
                 options(pure, nomem, nostack));
        }
        f32::from_bits(d)
    }
}

/// `min.f64`/`max.f64` have no `.NaN` form: NaN is checked first, then the hardware op
/// (which orders -0.0 below +0.0).
impl Ordered for f64 {
    const HIGHEST: Self = f64::INFINITY;
    const LOWEST: Self = f64::NEG_INFINITY;
    #[inline(always)]
    fn min2(a: Self, b: Self) -> Self {
        let d: u64;
        unsafe {
            asm!("min.f64 {0}, {1}, {2};", out(reg64) d, in(reg64) a.to_bits(), in(reg64) b.to_bits(),
                 options(pure, nomem, nostack));
        }
        if a != a || b != b {
            f64::NAN
        } else {
            f64::from_bits(d)
        }
    }
    #[inline(always)]
    fn max2(a: Self, b: Self) -> Self {
        let d: u64;
        unsafe {
            asm!("max.f64 {0}, {1}, {2};", out(reg64) d, in(reg64) a.to_bits(), in(reg64) b.to_bits(),
                 options(pure, nomem, nostack));
        }
        if a != a || b != b {
            f64::NAN
        } else {
            f64::from_bits(d)
        }
    }
}

/// min, max and minmax fold their elements in [`crate::packed`].
pub struct Min<T>(PhantomData<T>);
pub struct Max<T>(PhantomData<T>);
pub struct MinMax<T>(PhantomData<T>);

impl<T: Ordered> ReduceOp for Min<T> {
    type Acc = T;
    #[inline(always)]
    fn identity() -> T {
        T::HIGHEST
    }
    #[inline(always)]
    fn combine(a: T, b: T) -> T {
        T::min2(a, b)
    }
}
impl<T: Ordered> ReduceOp for Max<T> {
    type Acc = T;
    #[inline(always)]
    fn identity() -> T {
        T::LOWEST
    }
    #[inline(always)]
    fn combine(a: T, b: T) -> T {
        T::max2(a, b)
    }
}
impl<T: Ordered> ReduceOp for MinMax<T> {
    type Acc = Pair<T>;
    #[inline(always)]
    fn identity() -> Pair<T> {
        Pair { min: T::HIGHEST, max: T::LOWEST }
    }
    #[inline(always)]
    fn combine(a: Pair<T>, b: Pair<T>) -> Pair<T> {
        Pair { min: T::min2(a.min, b.min), max: T::max2(a.max, b.max) }
    }
}
/// Sums whose partials a block can add atomically into global memory (the ladder's `ATOMIC`).
pub trait AtomicAdd: ReduceOp {
    unsafe fn atomic_add(ptr: *mut Self::Acc, v: Self::Acc);
}
impl AtomicAdd for Sum<f32> {
    #[inline(always)]
    unsafe fn atomic_add(ptr: *mut f32, v: f32) {
        cuda_std::atomic::mid::atomic_fetch_add_f32_device(ptr, core::sync::atomic::Ordering::Relaxed, v);
    }
}
impl AtomicAdd for Sum<i32> {
    #[inline(always)]
    unsafe fn atomic_add(ptr: *mut i32, v: i32) {
        cuda_std::atomic::mid::atomic_fetch_add_i32_device(ptr, core::sync::atomic::Ordering::Relaxed, v);
    }
}
