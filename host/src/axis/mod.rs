//! Reductions along an axis: sum, min, max and minmax of each row or column of a row-major
//! m×n matrix with row stride lda, or of each segment of one input given by m + 1 offsets (as
//! `cub::DeviceSegmentedReduce` takes them), over the typed reductions' element types.
//!
//! - Sums accumulate as [`GpuStream::sum`] does (`T::Sum`); min/max/minmax write `T`, minmax
//!   as (min, max) pairs: `out[2i]`, `out[2i + 1]`.
//! - An empty row, column or segment gets the op's identity: sum 0, min `T::HIGHEST` (+inf for
//!   floats), max `T::LOWEST` (-inf), minmax (`T::HIGHEST`, `T::LOWEST`).
//! - Floats: NaN propagates, -0.0 orders below +0.0 (as the typed reductions); results are
//!   deterministic (same bits every call on a device: fixed lanes, fixed fold order).
//! - Calls enqueue without waiting; bad input gets its typed error and launches nothing.
mod plan;

pub use plan::{
    auto_strategy, first_grid, fold_plan, lanes_for, resolve, Axis, AxisShape, AxisStrategy, FoldPlan, AXIS_MAX_CHUNKS,
};

use crate::entries::axis_entry;
use crate::error::{Error, Result};
use crate::gpu::{Enqueue, GpuStream, KernelArgs};
use crate::typed::{TypedElement, TypedOp};
use cust::memory::{DeviceCopy, DeviceSlice};
use kernels::config::AXIS_BLOCK;

/// The axis kernels, in `kernels::axis::AXIS_KERNELS` order.
const ROWS: usize = 0;
const COLS: usize = 1;
const FOLD: usize = 2;

/// Byte range of a device slice.
fn bytes_of<T: DeviceCopy>(s: &DeviceSlice<T>) -> (u64, u64) {
    let start = s.as_device_ptr().as_raw();
    (start, start + (s.len() * std::mem::size_of::<T>()) as u64)
}

/// `Overlap` when `out`'s bytes meet `with`'s (both non-empty).
pub fn check_overlap(out: (u64, u64), with: (u64, u64), with_name: &'static str) -> Result<()> {
    if out.0 < out.1 && with.0 < with.1 && out.0 < with.1 && with.0 < out.1 {
        return Err(Error::Overlap { what: "out", with: with_name });
    }
    Ok(())
}

/// `out` must hold `need` elements.
fn need_out<A: DeviceCopy>(out: &DeviceSlice<A>, need: usize) -> Result<()> {
    if out.len() < need {
        return Err(Error::LengthMismatch { what: "out", expected: need, actual: out.len() });
    }
    Ok(())
}

/// What one call reduces: the input, its items (rows or segments) and where results go.
struct Job<'a, T: DeviceCopy> {
    op: TypedOp,
    type_name: &'static str,
    input: &'a DeviceSlice<T>,
    shape: AxisShape,
    offsets: Option<&'a DeviceSlice<u64>>,
    out: u64,
    /// Bytes of one result's accumulator.
    acc_bytes: usize,
}

/// Enqueues `job` with the resolved `strategy`, then the fold when it splits results.
///
/// # Safety
/// `job.acc_bytes` is the size of `axis_*_{op}_{type}`'s accumulator; `job.out` is the device
/// address of one per result, checked and lent for the call; `job.shape` fits `job.input`
/// (checked) and, for segments, `job.offsets` holds m + 1 offsets.
unsafe fn enqueue<T: DeviceCopy>(q: &mut Enqueue<'_>, job: Job<'_, T>, strategy: AxisStrategy) -> Result<()> {
    let shape = job.shape;
    let fold = fold_plan(shape, strategy);
    let partials = match fold {
        Some(f) => q.partials(f.items * f.chunks * job.acc_bytes)?,
        None => job.out,
    };
    let grid = first_grid(shape, strategy, q.gpu().max_grid_x())?;
    let op = job.op as usize;
    let mut args = KernelArgs::new();
    match strategy {
        AxisStrategy::Rows { lanes, chunks } => {
            // Segments clamp their offsets to n, the input's length.
            let n = if job.offsets.is_some() { job.input.len() } else { shape.n };
            args.out("input", job.input).usize(shape.m).usize(n).usize(shape.lda);
            match job.offsets {
                Some(o) => args.out("offsets", o),
                None => args.ptr(0),
            };
            args.u32(lanes).u32(chunks).ptr(partials);
            // SAFETY: `axis_rows_{op}_{T}` takes (input, rows, n, lda, offsets, lanes, chunks, out)
            // as pushed; the shape fits the input or the offsets index it (clamped to its
            // length); `partials` (or the caller's out) holds m·chunks accumulators; `lanes` is a power
            // of two ≤ 32 (resolved), the block `AXIS_BLOCK`.
            unsafe { q.launch(axis_entry(ROWS, op, job.type_name), grid, AXIS_BLOCK, &args)? };
        }
        AxisStrategy::Columns { tile, splits } => {
            args.out("input", job.input).usize(shape.m).usize(shape.n).usize(shape.lda).u32(tile).u32(splits);
            args.ptr(partials);
            // SAFETY: `axis_cols_{op}_{T}` takes (input, rows, n, lda, tile, splits, out) as
            // pushed; the grid is ⌈n / tile⌉·splits; `partials` (or out) holds every column's
            // splits·(AXIS_BLOCK / tile) chunks.
            unsafe { q.launch(axis_entry(COLS, op, job.type_name), grid, AXIS_BLOCK, &args)? };
        }
        AxisStrategy::Auto => unreachable!("resolved before enqueueing"),
    }
    if let Some(f) = fold {
        let mut args = KernelArgs::new();
        args.ptr(partials).usize(f.items).usize(f.chunks).usize(f.item_stride).usize(f.chunk_stride).ptr(job.out);
        let grid = f.items.min(q.gpu().max_grid_x() as usize) as u32;
        // SAFETY: `axis_fold_{op}_{T}` takes (partials, items, chunks, item_stride, chunk_stride,
        // out) as pushed; the first launch, before it on this stream, filled the partials as the
        // plan lays them out; `job.out` holds `items` accumulators.
        unsafe { q.launch(axis_entry(FOLD, op, job.type_name), grid, AXIS_BLOCK, &args)? };
    }
    Ok(())
}

impl GpuStream {
    /// Checks and enqueues one axis reduction writing `per` `O` per result into `out` (the
    /// op's accumulator: a sum's, one element, or a minmax pair).
    #[allow(clippy::too_many_arguments)]
    fn along<T: TypedElement, O: DeviceCopy>(
        &self,
        op: TypedOp,
        axis: Axis,
        shape: AxisShape,
        input: &DeviceSlice<T>,
        out: &mut DeviceSlice<O>,
        per: usize,
        strategy: AxisStrategy,
    ) -> Result<()> {
        shape.check(input.len())?;
        let results = axis.results(shape);
        need_out(out, results * per)?;
        check_overlap(bytes_of(&out.index(..results * per)), bytes_of(input), "input")?;
        let (shape, strategy) = resolve(axis, shape, std::mem::size_of::<T>(), self.sm_count(), strategy)?;
        if results == 0 {
            return Ok(());
        }
        self.check_lent("out", out)?;
        let (addr, acc_bytes) = (out.as_device_ptr().as_raw(), per * std::mem::size_of::<O>());
        let job = Job { op, type_name: T::NAME, input, shape, offsets: None, out: addr, acc_bytes };
        // SAFETY: `per` `O` are the op's accumulator (the callers' types); out holds one per
        // row or column (checked above, lent for the call); the shape fits the input.
        unsafe { enqueue::<T>(&mut self.lock()?, job, strategy) }
    }

    /// Checks and enqueues one segmented reduction, `per` `O` per result (as [`Self::along`]).
    fn segmented<T: TypedElement, O: DeviceCopy>(
        &self,
        op: TypedOp,
        input: &DeviceSlice<T>,
        offsets: &DeviceSlice<u64>,
        out: &mut DeviceSlice<O>,
        per: usize,
    ) -> Result<()> {
        let m =
            offsets.len().checked_sub(1).ok_or(Error::LengthMismatch { what: "offsets", expected: 1, actual: 0 })?;
        need_out(out, m * per)?;
        let written = bytes_of(&out.index(..m * per));
        check_overlap(written, bytes_of(input), "input")?;
        check_overlap(written, bytes_of(offsets), "offsets")?;
        if m == 0 {
            return Ok(());
        }
        self.check_lent("out", out)?;
        let avg = input.len() / m;
        let strategy = AxisStrategy::Rows { lanes: lanes_for(avg * std::mem::size_of::<T>()), chunks: 1 };
        let shape = AxisShape::new(m, 0);
        let (addr, acc_bytes) = (out.as_device_ptr().as_raw(), per * std::mem::size_of::<O>());
        let job = Job { op, type_name: T::NAME, input, shape, offsets: Some(offsets), out: addr, acc_bytes };
        // SAFETY: `per` `O` are the op's accumulator; out holds m of them (checked, lent); the kernel
        // clamps every offset to the input's length.
        unsafe { enqueue::<T>(&mut self.lock()?, job, strategy) }
    }

    /// Enqueues the sum of each row or column of `shape` in `input` into `out` (m or n
    /// results) without waiting. Empty rows or columns sum to 0.
    pub fn sum_along<T: TypedElement>(
        &self,
        axis: Axis,
        shape: AxisShape,
        input: &DeviceSlice<T>,
        out: &mut DeviceSlice<T::Sum>,
        strategy: AxisStrategy,
    ) -> Result<()> {
        self.along(TypedOp::Sum, axis, shape, input, out, 1, strategy)
    }

    /// Enqueues min, max or minmax (`op`) of each row or column into `out`: one `T` per result,
    /// minmax two (`out[2i]` = min, `out[2i + 1]` = max). Sums: [`GpuStream::sum_along`].
    pub fn reduce_along<T: TypedElement>(
        &self,
        op: TypedOp,
        axis: Axis,
        shape: AxisShape,
        input: &DeviceSlice<T>,
        out: &mut DeviceSlice<T>,
        strategy: AxisStrategy,
    ) -> Result<()> {
        match op {
            TypedOp::Sum => Err(Error::Unsupported { what: "sum into an element-typed buffer: use sum_along".into() }),
            TypedOp::MinMax => self.along(op, axis, shape, input, out, 2, strategy),
            _ => self.along(op, axis, shape, input, out, 1, strategy),
        }
    }

    /// Enqueues the sum of each segment `input[offsets[i]..offsets[i + 1]]` into `out[i]`
    /// (m = offsets.len() − 1 results; an empty segment sums to 0). Offsets are read on the
    /// device: they should be non-decreasing and at most `input.len()`, as CUB requires; an
    /// offset past the input is taken as its length and a decreasing pair as an empty segment.
    pub fn segmented_sum<T: TypedElement>(
        &self,
        input: &DeviceSlice<T>,
        offsets: &DeviceSlice<u64>,
        out: &mut DeviceSlice<T::Sum>,
    ) -> Result<()> {
        self.segmented(TypedOp::Sum, input, offsets, out, 1)
    }

    /// Enqueues min, max or minmax of each segment, as [`GpuStream::reduce_along`] lays results
    /// out; an empty segment gets the identity (`T::HIGHEST` for min, `T::LOWEST` for max).
    pub fn segmented_reduce<T: TypedElement>(
        &self,
        op: TypedOp,
        input: &DeviceSlice<T>,
        offsets: &DeviceSlice<u64>,
        out: &mut DeviceSlice<T>,
    ) -> Result<()> {
        match op {
            TypedOp::Sum => {
                Err(Error::Unsupported { what: "sum into an element-typed buffer: use segmented_sum".into() })
            }
            TypedOp::MinMax => self.segmented(op, input, offsets, out, 2),
            _ => self.segmented(op, input, offsets, out, 1),
        }
    }
}

#[cfg(test)]
mod tests;
