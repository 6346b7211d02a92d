//! The typed reductions' CPU reference (exact for integers, min and max; a justified tolerance
//! for float sums) and the case checker that `gpu_typed` and `gpu_half` share.
use super::{download, gpu, upload, Rng, U32, U64};
use cudakernels::cust::memory::DeviceSlice;
use cudakernels::{bf16, f16, Error, GpuStream, TypedElement, TypedOp};

/// CPU reference semantics, shared by every type.
pub trait Reference: TypedElement + PartialOrd {
    /// Views start this many elements into a buffer: every 16-byte alignment, and for 16-bit
    /// floats every start 0..15 elements in.
    const OFFSETS: usize = 16 / std::mem::size_of::<Self>();
    fn random(rng: &mut Rng) -> Self;
    /// Values that must appear: MIN and MAX (and for floats the special values).
    fn extremes() -> Vec<Self>;
    fn same(self, other: Self) -> bool;
    fn ref_min(a: Self, b: Self) -> Self;
    fn ref_max(a: Self, b: Self) -> Self;
    fn ref_sum(v: &[Self]) -> Self::Sum;
    fn sum_ok(got: Self::Sum, v: &[Self]) -> bool {
        // Per-thread chains of a few vectors, then vector, batch, block and grid trees: depth
        // well under 256.
        Self::sum_ok_depth(got, v, 256)
    }
    /// Whether `got` is the sum of `v` for a summation whose longest chain of additions is
    /// `depth` deep (exact for integers).
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
            fn sum_ok_depth(got: $acc, v: &[Self], _depth: usize) -> bool { got == Self::ref_sum(v) }
        }
    )*};
}
int_reference!(u8 => u64, i8 => i64, u16 => u64, i16 => i64, i32 => i64, u32 => u64);

macro_rules! float_reference {
    ($($t:ident => $s:ty, $u:expr, $offsets:expr, |$x:ident| $wide:expr, |$v:ident| $narrow:expr);*) => {$(
        impl Reference for $t {
            const OFFSETS: usize = $offsets;
            fn random(rng: &mut Rng) -> Self { let $v = rng.range(-1000.0, 1000.0); $narrow }
            fn extremes() -> Vec<Self> {
                let narrow = |$v: f64| -> $t { $narrow };
                vec![<$t>::MIN, <$t>::MAX, narrow(-0.0), narrow(0.0)]
            }
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
            fn ref_sum(v: &[Self]) -> $s { v.iter().map(|&$x| $wide).sum::<f64>() as $s }
            /// Every element is exact in the accumulator (f16/bf16 widen exactly to f32); any
            /// order of n additions errs by at most depth·u·Σ|x| (first order).
            fn sum_ok_depth(got: $s, v: &[Self], depth: usize) -> bool {
                let wide = |$x: $t| -> f64 { $wide };
                let want: f64 = v.iter().map(|&x| wide(x)).sum();
                if !want.is_finite() {
                    return (want.is_nan() && got.is_nan()) || got as f64 == want;
                }
                let abs: f64 = v.iter().map(|&x| wide(x).abs()).sum();
                (got as f64 - want).abs() <= 2.0 * depth as f64 * $u * abs
            }
        }
    )*};
}
float_reference!(
    f32 => f32, U32, 4, |x| x as f64, |v| v as f32;
    f64 => f64, U64, 2, |x| x, |v| v;
    f16 => f32, U32, 16, |x| x.to_f64(), |v| f16::from_f64(v);
    bf16 => f32, U32, 16, |x| x.to_f64(), |v| bf16::from_f64(v)
);

/// Inputs of a case: random values, MIN/MAX at random places and at both ends.
pub fn make_input<T: Reference>(rng: &mut Rng, n: usize, special: &[T]) -> Vec<T> {
    let mut v: Vec<T> = (0..n).map(|_| T::random(rng)).collect();
    if n == 0 {
        return v;
    }
    for (k, &x) in T::extremes().iter().chain(special.iter()).enumerate() {
        let at = match k % 3 {
            0 => 0,
            1 => n - 1,
            _ => rng.below(n),
        };
        if rng.below(2) == 0 || n < 4 {
            v[at] = x;
        }
    }
    v
}

/// Checks every op on `host` through views that start 0..`T::OFFSETS` elements into a buffer.
pub fn check_case<T: Reference>(gpu: &GpuStream, rng: &mut Rng, host: &[T], what: &str) {
    let len = host.len();
    let mut padded: Vec<T> = (0..len + T::OFFSETS).map(|_| T::random(rng)).collect();
    for offset in 0..T::OFFSETS {
        padded[offset..offset + len].copy_from_slice(host);
        let dev = upload(&padded);
        let view = dev.index(offset..offset + len);
        let ctx = format!("seed {} {} {} len {} offset {}", rng.seed, T::NAME, what, len, offset);
        let sum = gpu.sum(&view).unwrap();
        assert!(T::sum_ok(sum, host), "{}: sum {:?}, want {:?}", ctx, sum, T::ref_sum(host));
        if len == 0 {
            assert_eq!(gpu.min(&view).unwrap_err(), Error::Empty { op: "min" });
            assert_eq!(gpu.max(&view).unwrap_err(), Error::Empty { op: "max" });
            assert_eq!(gpu.minmax(&view).unwrap_err(), Error::Empty { op: "minmax" });
            check_into(gpu, &view, sum, None, &ctx);
            continue;
        }
        let want_min = host.iter().copied().fold(host[0], T::ref_min);
        let want_max = host.iter().copied().fold(host[0], T::ref_max);
        let got_min = gpu.min(&view).unwrap();
        let got_max = gpu.max(&view).unwrap();
        let (mm_min, mm_max) = gpu.minmax(&view).unwrap();
        assert!(got_min.same(want_min), "{}: min {:?}, want {:?}", ctx, got_min, want_min);
        assert!(got_max.same(want_max), "{}: max {:?}, want {:?}", ctx, got_max, want_max);
        assert!(
            mm_min.same(want_min) && mm_max.same(want_max),
            "{}: minmax ({:?}, {:?}), want ({:?}, {:?})",
            ctx,
            mm_min,
            mm_max,
            want_min,
            want_max
        );
        check_into(gpu, &view, sum, Some((got_min, got_max)), &ctx);
    }
}

/// `v` with every bit flipped: a poison that differs from `v` in every bit.
fn complement<V: Copy>(v: V) -> V {
    let mut c = v;
    // SAFETY: the typed reductions' values are plain integers and floats: any bytes are valid.
    let bytes = unsafe { std::slice::from_raw_parts_mut(&mut c as *mut V as *mut u8, std::mem::size_of::<V>()) };
    bytes.iter_mut().for_each(|b| *b ^= 0xff);
    c
}

fn same_bits<V: Copy>(a: V, b: V) -> bool {
    // SAFETY: plain integers and floats, read as their bytes.
    let bytes =
        |v: &V| unsafe { std::slice::from_raw_parts(v as *const V as *const u8, std::mem::size_of::<V>()) }.to_vec();
    bytes(&a) == bytes(&b)
}

/// The `_into` forms store exactly the bits the value calls returned (`sum`, and `extremes` =
/// (min, max) unless the view is empty) into outputs poisoned with their complement.
fn check_into<T: Reference>(gpu: &GpuStream, view: &DeviceSlice<T>, sum: T::Sum, extremes: Option<(T, T)>, ctx: &str) {
    let mut out = upload(&[complement(sum)]);
    gpu.sum_into(view, &mut out).unwrap();
    assert!(same_bits(download(gpu, &out)[0], sum), "{}: sum_into differs from sum", ctx);
    let (lo, hi) = match extremes {
        Some(e) => e,
        None => {
            let err = gpu.reduce_into(TypedOp::MinMax, view, &mut upload(&[T::default(); 2])).unwrap_err();
            assert_eq!(err, Error::Empty { op: "minmax" }, "{}", ctx);
            return;
        }
    };
    for (op, want) in [(TypedOp::Min, vec![lo]), (TypedOp::Max, vec![hi]), (TypedOp::MinMax, vec![lo, hi])] {
        let mut out = upload(&want.iter().map(|&v| complement(v)).collect::<Vec<T>>());
        gpu.reduce_into(op, view, &mut out).unwrap();
        let got = download(gpu, &out);
        assert!(
            got.iter().zip(&want).all(|(&g, &w)| same_bits(g, w)),
            "{}: {:?} into {:?}, want {:?}",
            ctx,
            op,
            got,
            want
        );
    }
}

/// Every length × special-value case of `T` (see [`make_input`]), on fresh random inputs.
pub fn all_cases<T: Reference>(test: &str, lengths: &[usize], specials: &[Vec<T>]) {
    let handle = match gpu(test) {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let mut rng = Rng::fresh(test);
    for &n in lengths.iter() {
        for (i, special) in specials.iter().enumerate() {
            let host = make_input(&mut rng, n, special);
            check_case(gpu, &mut rng, &host, &format!("case {}", i));
        }
    }
}
