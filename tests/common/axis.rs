//! Shared parts of the axis reductions' GPU tests: cases, poisoned outputs, the reference check.
use super::typed::Reference;
use super::{download, upload, Rng};
use cudakernels::cust::memory::{DeviceBuffer, DeviceCopy, DevicePointer, DeviceSlice};
use cudakernels::{Axis, AxisShape, AxisStrategy, GpuStream, TypedOp};

/// Byte pattern of a poisoned output: one the kernel leaves unwritten keeps it, which a right
/// result matches only by chance (an 8-bit result 0xa5, a 1 in 256 chance per result).
const POISON: u8 = 0xa5;

pub fn poisoned<A: DeviceCopy>(len: usize) -> DeviceBuffer<A> {
    // SAFETY: every byte is set below before anything reads the buffer.
    let b = unsafe { DeviceBuffer::<A>::uninitialized(len.max(1)) }.expect("alloc");
    let bytes = len.max(1) * std::mem::size_of::<A>();
    // SAFETY: the byte view covers exactly the buffer, which outlives it.
    let mut raw =
        unsafe { DeviceSlice::<u8>::from_raw_parts_mut(DevicePointer::from_raw(b.as_device_ptr().as_raw()), bytes) };
    raw.set_8(POISON).expect("poison");
    b
}

/// Checks one op's results against the reference over `lines` (a row, column or segment each).
pub fn check_results<T: Reference>(op: TypedOp, lines: &[Vec<T>], sums: &[T::Sum], values: &[T], ctx: &str) {
    for (i, line) in lines.iter().enumerate() {
        let lo = line.iter().copied().fold(T::HIGHEST, T::ref_min);
        let hi = line.iter().copied().fold(T::LOWEST, T::ref_max);
        match op {
            TypedOp::Sum => {
                // Depth: one lane's chain plus the group and fold trees; at most the length + 64.
                let ok = T::sum_ok_depth(sums[i], line, line.len() + 64);
                assert!(ok, "{} result {}: sum {:?}, want {:?}", ctx, i, sums[i], T::ref_sum(line));
            }
            TypedOp::Min => assert!(values[i].same(lo), "{} result {}: min {:?}, want {:?}", ctx, i, values[i], lo),
            TypedOp::Max => assert!(values[i].same(hi), "{} result {}: max {:?}, want {:?}", ctx, i, values[i], hi),
            TypedOp::MinMax => {
                let (a, b) = (values[2 * i], values[2 * i + 1]);
                assert!(
                    a.same(lo) && b.same(hi),
                    "{} result {}: minmax ({:?}, {:?}), want ({:?}, {:?})",
                    ctx,
                    i,
                    a,
                    b,
                    lo,
                    hi
                );
            }
        }
    }
}

/// A case's host data: the buffer, the view's start and the shape it holds.
pub struct Case<T> {
    pub buffer: Vec<T>,
    pub offset: usize,
    pub shape: AxisShape,
}

impl<T: Reference> Case<T> {
    pub fn new(rng: &mut Rng, m: usize, n: usize, pad: usize, offset: usize, specials: &[T]) -> Case<T> {
        let shape = AxisShape::new(m, n).with_lda(n + pad);
        let span = shape.span().unwrap();
        let mut buffer: Vec<T> = (0..offset + span + 3).map(|_| T::random(rng)).collect();
        for &x in specials.iter() {
            if span > 0 && rng.below(2) == 0 {
                let at = offset + rng.below(span);
                buffer[at] = x;
            }
        }
        Case { buffer, offset, shape }
    }

    /// The elements of row or column `i`.
    pub fn line(&self, axis: Axis, i: usize) -> Vec<T> {
        let AxisShape { m, n, lda } = self.shape;
        let at = |r: usize, c: usize| self.buffer[self.offset + r * lda + c];
        match axis {
            Axis::Rows => (0..n).map(|c| at(i, c)).collect(),
            Axis::Columns => (0..m).map(|r| at(r, i)).collect(),
        }
    }
}

/// Runs every op along `axis` of `case` with `strategy` and checks every result.
pub fn run_case<T: Reference>(s: &GpuStream, case: &Case<T>, axis: Axis, strategy: AxisStrategy, ctx: &str) {
    let dev = upload(&case.buffer);
    let view = dev.index(case.offset..);
    let results = axis.results(case.shape);
    let lines: Vec<Vec<T>> = (0..results).map(|i| case.line(axis, i)).collect();
    for &op in TypedOp::ALL.iter() {
        let ctx = format!("{} {:?} {:?} {:?}", ctx, op, axis, strategy);
        let (sums, values) = (poisoned::<T::Sum>(results), poisoned::<T>(2 * results));
        match op {
            TypedOp::Sum => s.sum_along(axis, case.shape, &view, &mut sums.index(..results), strategy),
            _ => s.reduce_along(op, axis, case.shape, &view, &mut values.index(..), strategy),
        }
        .unwrap_or_else(|e| panic!("{}: {}", ctx, e));
        let (sums, values) = (download(s, &sums), download(s, &values));
        check_results(op, &lines, &sums, &values, &ctx);
    }
}

/// Row counts for the `short` kernels: one, a warp and one, a block ±1, many blocks.
pub const SHORT_ROW_COUNTS: [usize; 5] = [1, 33, 255, 257, 3001];

/// Row lengths for the `short` kernels over elements of `per` to a 16-byte vector: empty, one
/// element, around one vector, whole and partial vectors up to past the four a thread holds,
/// and around the six vectors of the longest rows `Auto` gives arg ops a thread each.
pub fn short_row_lengths(per: usize) -> [usize; 13] {
    let (four, six) = (4 * per, 6 * per);
    [0, 1, per - 1, per, per + 1, 2 * per - 1, 3 * per + 1, four - 1, four, four + 1, 5 * per + 3, six, six + 1]
}
