//! Shared parts of the arg tests: a CPU reference order written independently of the kernels'
//! keys, and the cases of one length (ties, all equal, NaN placements, ±0, MIN/MAX).
use super::axis::poisoned;
use super::{download, upload, Rng};
use cudakernels::{bf16, f16, ArgOp, Axis, AxisIndex, AxisShape, AxisStrategy, GpuStream, TypedElement, ValueIndex};
use std::cmp::Ordering;

/// The arg ops along an axis.
pub const AXIS_ARG_OPS: [ArgOp; 2] = [ArgOp::ArgMin, ArgOp::ArgMax];

/// CPU reference order, written independently of the kernels' keys.
pub trait ArgRef: TypedElement + PartialOrd {
    fn random(rng: &mut Rng) -> Self;
    /// Values that must be found wherever they are: MIN/MAX, NaN, ±inf, ±0.
    fn specials() -> Vec<Self>;
    fn is_nan(self) -> bool;
    fn bits(self) -> u64;
    /// Order for argmax (`nan_high`) or argmin: NaN beyond every number, -0 below +0.
    fn order(a: Self, b: Self, nan_high: bool) -> Ordering {
        match (a.is_nan(), b.is_nan()) {
            (true, true) => return Ordering::Equal,
            (true, false) => return if nan_high { Ordering::Greater } else { Ordering::Less },
            (false, true) => return if nan_high { Ordering::Less } else { Ordering::Greater },
            _ => {}
        }
        match a.partial_cmp(&b).expect("numbers") {
            // Equal numbers differ only as -0/+0: the one with the sign bit is below.
            Ordering::Equal => (b.bits() >> (8 * std::mem::size_of::<Self>() - 1))
                .cmp(&(a.bits() >> (8 * std::mem::size_of::<Self>() - 1))),
            o => o,
        }
    }
}

macro_rules! int_ref {
    ($($t:ty),*) => {$(
        impl ArgRef for $t {
            fn random(rng: &mut Rng) -> Self { rng.next_u64() as $t }
            fn specials() -> Vec<Self> { vec![<$t>::MIN, <$t>::MAX] }
            fn is_nan(self) -> bool { false }
            fn bits(self) -> u64 { 0 }
        }
    )*};
}
int_ref!(u8, i8, u16, i16, i32, u32);

macro_rules! float_ref {
    ($($t:ty),*) => {$(
        impl ArgRef for $t {
            fn random(rng: &mut Rng) -> Self { rng.range(-1000.0, 1000.0) as $t }
            fn specials() -> Vec<Self> {
                vec![<$t>::MIN, <$t>::MAX, <$t>::INFINITY, <$t>::NEG_INFINITY, -0.0, 0.0, <$t>::NAN]
            }
            fn is_nan(self) -> bool { self != self }
            fn bits(self) -> u64 { self.to_bits() as u64 }
        }
    )*};
}
float_ref!(f32, f64);

macro_rules! half_ref {
    ($($t:ident),*) => {$(
        impl ArgRef for $t {
            fn random(rng: &mut Rng) -> Self { $t::from_f64(rng.range(-1000.0, 1000.0)) }
            fn specials() -> Vec<Self> {
                vec![$t::MIN, $t::MAX, $t::INFINITY, $t::NEG_INFINITY, $t::NEG_ZERO, $t::ZERO, $t::NAN]
            }
            fn is_nan(self) -> bool { $t::is_nan(self) }
            fn bits(self) -> u64 { self.to_bits() as u64 }
        }
    )*};
}
half_ref!(f16, bf16);

/// The first index of the extreme of `v` (argmax when `high`).
pub fn reference<T: ArgRef>(v: &[T], high: bool) -> ValueIndex<T> {
    let mut best = 0;
    for i in 1..v.len() {
        let o = T::order(v[i], v[best], high);
        if (high && o == Ordering::Greater) || (!high && o == Ordering::Less) {
            best = i;
        }
    }
    ValueIndex { value: v[best], index: best as u64 }
}

/// Equal values: both NaN, or equal with the same bits (so -0.0 is not +0.0).
pub fn same_value<T: ArgRef>(a: T, b: T) -> bool {
    (a.is_nan() && b.is_nan()) || (a.bits() == b.bits() && a == b)
}

pub fn same<T: ArgRef>(a: ValueIndex<T>, b: ValueIndex<T>) -> bool {
    a.index == b.index && same_value(a.value, b.value)
}

/// The cases of one length: random with specials at the ends and inside, all equal, ties of
/// the extremes at both ends, and (floats) NaN first, last, in the middle and several.
pub fn cases<T: ArgRef>(rng: &mut Rng, n: usize) -> Vec<(String, Vec<T>)> {
    let random = |rng: &mut Rng| (0..n).map(|_| T::random(rng)).collect::<Vec<T>>();
    let mut out = vec![("random".to_string(), random(rng))];
    if n == 0 {
        return out;
    }
    let mut specials = random(rng);
    for (k, &s) in T::specials().iter().filter(|s| !s.is_nan()).enumerate() {
        let at = [0, n - 1, rng.below(n)][k % 3];
        specials[at] = s;
    }
    out.push(("specials".into(), specials));
    let all = T::random(rng);
    out.push(("all equal".into(), vec![all; n]));
    let mut ties = random(rng);
    let (lo, hi) = (T::specials()[0], T::specials()[1]);
    for &(at, v) in [(0, hi), (n - 1, hi), (n / 2, lo), (n - 1 - n / 3, lo)].iter() {
        ties[at] = v;
    }
    out.push(("ties at the ends".into(), ties));
    if T::specials().last().map_or(false, |s| s.is_nan()) {
        let nan = *T::specials().last().unwrap();
        for (what, places) in [
            ("NaN first", vec![0]),
            ("NaN last", vec![n - 1]),
            ("NaN middle", vec![n / 2]),
            ("NaNs", vec![n - 1, n / 3, n / 2]),
        ] {
            let mut v = random(rng);
            for &p in places.iter() {
                v[p] = nan;
            }
            out.push((what.into(), v));
        }
        let zeros: Vec<T> =
            (0..n).map(|i| if (i * 7 + 3) % 5 < 2 { T::specials()[4] } else { T::specials()[5] }).collect();
        out.push(("-0 and +0".into(), zeros));
    }
    out
}

/// What a line's result must be: the reference, or for an empty line the op's identity and
/// the index type's all-ones sentinel.
pub fn want<T: ArgRef, I: AxisIndex>(line: &[T], op: ArgOp) -> ValueIndex<T> {
    let high = op == ArgOp::ArgMax;
    if line.is_empty() {
        let value = if high { T::LOWEST } else { T::HIGHEST };
        return ValueIndex { value, index: if I::WIDE { u64::MAX } else { u32::MAX as u64 } };
    }
    reference(line, high)
}

/// Checks both ops' results (`values`, `indices` as downloaded) against `lines`.
pub fn check_along<T: ArgRef, I: AxisIndex + Into<u64>>(
    op: ArgOp,
    lines: &[Vec<T>],
    values: &[T],
    indices: &[I],
    ctx: &str,
) {
    for (i, line) in lines.iter().enumerate() {
        let w = want::<T, I>(line, op);
        let (v, x) = (values[i], indices[i].into());
        assert!(same_value(v, w.value) && x == w.index, "{} {:?} line {}: ({:?}, {}), want {:?}", ctx, op, i, v, x, w);
    }
}

/// Indices alone (`arg_indices_along`, `segmented_arg_indices`) against the CPU reference.
pub fn check_indices<T: ArgRef, I: AxisIndex + Into<u64>>(op: ArgOp, lines: &[Vec<T>], indices: &[I], ctx: &str) {
    for (i, line) in lines.iter().enumerate() {
        let (x, w) = (indices[i].into(), want::<T, I>(line, op).index);
        assert_eq!(x, w, "{} {:?} indices alone, line {}", ctx, op, i);
    }
}

/// A buffer holding an m×n matrix (row stride n + pad) `offset` elements in, each line along
/// `axis` one of the arg cases of its length, and those lines.
pub fn matrix<T: ArgRef>(rng: &mut Rng, shape: AxisShape, offset: usize, axis: Axis) -> (Vec<T>, Vec<Vec<T>>) {
    let span = shape.span().unwrap();
    let mut buffer: Vec<T> = (0..offset + span + 3).map(|_| T::random(rng)).collect();
    let (results, len) = match axis {
        Axis::Rows => (shape.m, shape.n),
        Axis::Columns => (shape.n, shape.m),
    };
    let at = |i: usize, j: usize| match axis {
        Axis::Rows => offset + i * shape.lda + j,
        Axis::Columns => offset + j * shape.lda + i,
    };
    let mut lines = Vec::with_capacity(results);
    for i in 0..results {
        let mut all = cases::<T>(rng, len);
        let line = all.swap_remove(i % all.len()).1;
        for (j, &x) in line.iter().enumerate() {
            buffer[at(i, j)] = x;
        }
        lines.push(line);
    }
    (buffer, lines)
}

/// Runs both ops along `axis` with `strategy` into poisoned outputs and checks them.
pub fn run_along<T: ArgRef, I: AxisIndex + Into<u64> + Default>(
    s: &GpuStream,
    (buffer, lines): (&[T], &[Vec<T>]),
    offset: usize,
    shape: AxisShape,
    axis: Axis,
    strategy: AxisStrategy,
    ctx: &str,
) {
    let dev = upload(buffer);
    let view = dev.index(offset..);
    let results = lines.len();
    for &op in AXIS_ARG_OPS.iter() {
        let ctx = format!("{} {:?} {:?} {}-byte indices", ctx, axis, strategy, std::mem::size_of::<I>());
        let (values, indices) = (poisoned::<T>(results), poisoned::<I>(results));
        s.arg_along(op, axis, shape, &view, &mut values.index(..results), &mut indices.index(..results), strategy)
            .unwrap_or_else(|e| panic!("{}: {}", ctx, e));
        check_along(op, lines, &download(s, &values), &download(s, &indices), &ctx);
        let alone = poisoned::<I>(results);
        s.arg_indices_along(op, axis, shape, &view, &mut alone.index(..results), strategy)
            .unwrap_or_else(|e| panic!("{} indices alone: {}", ctx, e));
        check_indices(op, lines, &download(s, &alone), &ctx);
    }
}
