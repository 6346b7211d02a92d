//! Reductions along an axis: sum, min, max and minmax of each row or column of a row-major
//! m×n matrix with row stride lda, or of each segment of one input given by m + 1 offsets (as
//! `cub::DeviceSegmentedReduce` takes them), over the typed reductions' element types.
//!
//! - Sums accumulate as [`GpuStream::sum`] does (`T::Sum`); min/max/minmax write `T`, minmax
//!   as (min, max) pairs: `out[2i]`, `out[2i + 1]`.
//! - An empty row, column or segment gets the op's identity: sum 0, min `T::HIGHEST` (+inf for
//!   floats), max `T::LOWEST` (-inf), minmax (`T::HIGHEST`, `T::LOWEST`).
//! - Floats: NaN propagates, -0.0 orders below +0.0 (as the typed reductions); results are
//!   deterministic (same bits every call on a device: fixed lanes, fixed fold order; columns
//!   read as 16-byte vectors when the rows start 16-byte aligned, so a view at another
//!   alignment may fold them in another order).
//! - argmin and argmax: [`GpuStream::arg_along`] and [`GpuStream::segmented_arg`], values
//!   and u32 or u64 indices ([`arg::AxisIndex`]) into two outputs; an empty line gets the identity
//!   and an all-ones index. [`GpuStream::arg_indices_along`] and
//!   [`GpuStream::segmented_arg_indices`] write the indices alone.
//! - `Auto` on one row (m = 1, or the columns of a contiguous one-column matrix) runs the
//!   whole-buffer reduction of that row (arg ops: with u64 indices).
//! - Calls enqueue without waiting; bad input gets its typed error and launches nothing.
pub mod arg;
pub(crate) mod plan;

use kernels::axis::rows_by_vectors;
use plan::{
    column_width, column_word_tracks, first_block, first_grid, fold_grid, fold_plan, folded_columns, lanes_for,
    one_element_rows, resolve, rows_aligned, segment_warps_fit, short_rows, AxisFold,
};
pub use plan::{Axis, AxisShape, AxisStrategy};

use crate::arg::{enqueue_arg, ArgOp, ArgSlot};
use crate::entries::{
    axis_arg_entry, axis_arg_segments_entry, axis_arg_short_entry, axis_arg_tiles_entry, axis_arg_word_tiles_entry,
    axis_arg_words_entry, axis_entry, axis_short_entry, axis_tiles_entry,
};
use crate::error::{Error, Result};
use crate::gpu::ResultSlot;
use crate::gpu::{check_overlap, Enqueue, GpuStream, KernelArgs};
use crate::launch::div_ceil;
use crate::raw::view;
use crate::typed::{enqueue_extreme, enqueue_sum, TypedElement, TypedOp};
use cust::memory::{DeviceCopy, DeviceSlice};
use kernels::config::{AXIS_BLOCK, VECTOR_BYTES, WARP_SIZE};

/// The axis kernels, in `kernels::axis::AXIS_KERNELS` order (the arg kernels' too).
const ROWS: usize = 0;
const COLS: usize = 1;
const FOLD: usize = 2;
const PIECES: usize = 3;

/// One output buffer of a call: its name, device address, length, element bytes, and the
/// elements each result takes.
#[derive(Clone, Copy)]
struct Output {
    what: &'static str,
    addr: u64,
    len: usize,
    elem: usize,
    per: usize,
}

impl Output {
    fn of<A: DeviceCopy>(what: &'static str, s: &DeviceSlice<A>, per: usize) -> Output {
        Output { what, addr: s.as_device_ptr().as_raw(), len: s.len(), elem: std::mem::size_of::<A>(), per }
    }

    /// The byte range of a slice read (every element).
    fn read<A: DeviceCopy>(s: &DeviceSlice<A>) -> (u64, u64) {
        let o = Output::of("", s, 1);
        (o.addr, o.addr + (o.len * o.elem) as u64)
    }

    /// The bytes `results` results take; `LengthMismatch` when it holds fewer.
    fn written(&self, results: usize) -> Result<(u64, u64)> {
        let need = results * self.per;
        if self.len < need {
            return Err(Error::LengthMismatch { what: self.what, expected: need, actual: self.len });
        }
        Ok((self.addr, self.addr + (need * self.elem) as u64))
    }
}

/// Checks `outs` for `results` results: lengths first, then that none meets a read buffer of
/// `reads` or another output.
fn check_outputs(outs: &[Output], results: usize, reads: &[(&'static str, (u64, u64))]) -> Result<()> {
    let written = outs.iter().map(|o| o.written(results)).collect::<Result<Vec<_>>>()?;
    for (i, (o, w)) in outs.iter().zip(written.iter()).enumerate() {
        for &(name, r) in reads.iter() {
            check_overlap(o.what, *w, r, name)?;
        }
        for (other, &w2) in outs.iter().zip(written.iter()).take(i) {
            check_overlap(o.what, *w, w2, other.what)?;
        }
    }
    Ok(())
}

/// Where a job's results go.
#[derive(Clone, Copy)]
enum Results {
    /// A typed op's accumulator per result at this device address.
    Acc(u64),
    /// An arg op's values and indices (u64 indices when `wide`, else u32).
    Arg { values: u64, indices: u64, wide: bool },
}

/// What one call reduces: the input, its items (rows or segments) and where results go.
struct Job<'a, T: DeviceCopy> {
    /// The op's number in `TYPED_OPS`, or in `AXIS_ARG_OPS` for `Results::Arg`.
    op: usize,
    type_name: &'static str,
    input: &'a DeviceSlice<T>,
    shape: AxisShape,
    /// Columns per thread of the `cols` kernel ([`plan::column_width`]), or the one-element rows
    /// a thread of the `rows` kernel reads at once (a vector of them where
    /// [`kernels::axis::rows_by_vectors`] holds, else 1).
    width: u32,
    offsets: Option<&'a DeviceSlice<u64>>,
    out: Results,
    /// Bytes of one result's accumulator.
    acc_bytes: usize,
}

impl<T: DeviceCopy> Job<'_, T> {
    /// The entry point of axis kernel `kernel` for this job's op and type.
    fn entry(&self, kernel: usize) -> usize {
        match self.out {
            Results::Acc(_) => axis_entry(kernel, self.op, self.type_name),
            Results::Arg { .. } => axis_arg_entry(kernel, self.op, self.type_name),
        }
    }

    /// Pushes the `rows` and `cols` launches' outputs: `partials` (the results when not split);
    /// arg kernels take (partials or null, values, indices, wide).
    fn push_out(&self, args: &mut KernelArgs, partials: Option<u64>) {
        match (self.out, partials) {
            (Results::Acc(_), None) => self.push_results(args),
            (Results::Acc(_), Some(p)) => {
                args.ptr(p);
            }
            (Results::Arg { .. }, Some(p)) => {
                args.ptr(p).ptr(0).ptr(0).u32(0);
            }
            (Results::Arg { .. }, None) => {
                args.ptr(0);
                self.push_results(args);
            }
        }
    }

    /// Pushes where the results go: the accumulators, or an arg op's (values, indices, wide).
    fn push_results(&self, args: &mut KernelArgs) {
        match self.out {
            Results::Acc(out) => args.ptr(out),
            Results::Arg { values, indices, wide } => args.ptr(values).ptr(indices).u32(wide as u32),
        };
    }
}

/// `Unsupported` unless `type_name` is one of `types`, the types with `strategy`'s `kernel` entries.
fn kernel_for(strategy: AxisStrategy, kernel: &str, types: &[&str], type_name: &str) -> Result<()> {
    if types.contains(&type_name) {
        return Ok(());
    }
    Err(Error::Unsupported { what: format!("{:?} over {}: no {} kernel for this type", strategy, type_name, kernel) })
}

/// Enqueues `job` with the resolved `strategy`, then the fold when it splits results.
///
/// # Safety
/// `job.acc_bytes` is the size of `axis_*_{op}_{type}`'s accumulator (a `ValueIndex<T>` for
/// `axis_arg_*`); `job.out` holds the device addresses of one accumulator (or one value and one
/// index of its width) per result, checked and lent for the call; `job.shape` fits `job.input`
/// (checked) and, for segments, `job.offsets` holds m + 1 offsets.
unsafe fn enqueue<T: DeviceCopy>(q: &mut Enqueue<'_>, job: Job<'_, T>, strategy: AxisStrategy) -> Result<()> {
    let shape = job.shape;
    let fold = fold_plan(shape, strategy);
    let partials = match fold {
        Some(f) => Some(q.partials(f.items * f.chunks * job.acc_bytes)?),
        None => None,
    };
    // Split rows are folded by each row's last piece on a zeroed ticket per row (u32s in the
    // stream's zeroed 64-bit slots, which the kernels leave zero), unless they have more pieces
    // than it folds; those and split columns by the fold launch.
    let tickets = match fold {
        Some(f) if f.by_last_piece => Some(q.flagged_slots(div_ceil(shape.m, 2))?),
        _ => None,
    };
    let segments = job.offsets.is_some();
    let grid = first_grid(shape, strategy, job.width, segments, q.gpu().max_grid_x())?;
    let mut args = KernelArgs::new();
    match strategy {
        AxisStrategy::Rows { lanes: WARP_SIZE, chunks: 1 }
            if segments
                && matches!(job.out, Results::Arg { .. })
                && segment_warps_fit(shape.m, q.gpu().max_grid_x()) =>
        {
            let offsets = job.offsets.expect("segments have offsets");
            args.out("input", job.input).usize(shape.m).usize(job.input.len()).out("offsets", offsets);
            job.push_results(&mut args);
            // SAFETY: `axis_arg_segments_{op}_{T}` takes (input, segments, n, offsets, values,
            // indices, wide) as pushed; `offsets` holds m + 1 offsets, each clamped to the input's
            // n elements; the outputs hold m results; the grid (`first_grid`) holds a warp per
            // segment (`segment_warps_fit`), in blocks of `first_block`'s whole warps.
            unsafe { q.launch(axis_arg_segments_entry(job.op, job.type_name), grid, first_block(segments), &args)? };
        }
        AxisStrategy::Rows { lanes, chunks } => {
            // Segments clamp their offsets to n, the input's length.
            let n = if job.offsets.is_some() { job.input.len() } else { shape.n };
            args.out("input", job.input).usize(shape.m).usize(n).usize(shape.lda);
            match job.offsets {
                Some(o) => args.out("offsets", o),
                None => args.ptr(0),
            };
            args.u32(lanes).u32(chunks);
            // Split rows take interleaved pieces, an entry of their own (the `rows` kernels keep
            // their code); so do a typed op's rows a block each (an arg op's take `rows`' loop).
            let pieces = chunks > 1
                && job.offsets.is_none()
                && (matches!(job.out, Results::Acc(_)) || !kernels::axis::folds_in_block(lanes, chunks));
            if pieces {
                args.ptr(partials.unwrap_or(0)).ptr(tickets.unwrap_or(0));
                job.push_results(&mut args);
            } else {
                job.push_out(&mut args, partials);
            }
            // SAFETY: `axis[_arg]_rows_{op}_{T}` take (input, rows, n, lda, offsets, lanes,
            // chunks, out) and `axis[_arg]_pieces_{op}_{T}` (…, chunks, partials, tickets, out)
            // as pushed (out as `push_out` and `push_results` lay it out); the shape fits the
            // input or the offsets index it (clamped to its length); split rows: `partials`
            // holds m·chunks accumulators and `tickets` m zeroed u32s, or is null where the fold
            // launch below folds them (a row per block needs neither); out holds m results;
            // `lanes` is a power of two ≤ 32 (resolved), the block `first_block`'s whole warps.
            unsafe { q.launch(job.entry(if pieces { PIECES } else { ROWS }), grid, first_block(segments), &args)? };
        }
        AxisStrategy::Columns { tile, splits } => {
            args.out("input", job.input).usize(shape.m).usize(shape.n).usize(shape.lda).u32(tile).u32(splits);
            args.u32(job.width);
            job.push_out(&mut args, partials);
            let entry = match job.out {
                Results::Arg { .. } if column_word_tracks(job.type_name, shape, strategy, job.width) => {
                    axis_arg_words_entry(job.op, job.type_name)
                }
                _ => job.entry(COLS),
            };
            // SAFETY: `axis[_arg]_cols_{op}_{T}` takes (input, rows, n, lda, tile, splits, width,
            // out) as pushed, and so does `axis_arg_words_{op}_{T}` where `column_word_tracks`
            // holds (a vector of columns per thread, splits of at most `WORD_SPLIT_MAX_ROWS`
            // rows); `width` is `column_width`'s (1, or a vector on 16-byte aligned rows); the
            // grid is ⌈n / (tile·width)⌉·splits; `partials` (or out) holds every column's
            // splits·(AXIS_BLOCK / tile) chunks.
            unsafe { q.launch(entry, grid, AXIS_BLOCK, &args)? };
        }
        AxisStrategy::FoldedColumns { tile, splits } => {
            kernel_for(strategy, "tiles", &kernels::column_tiles::AXIS_TILE_TYPES, job.type_name)?;
            let tiles = div_ceil(shape.n, (tile * job.width) as usize);
            let (partials, tickets) = if splits > 1 {
                (q.partials(splits as usize * shape.n * job.acc_bytes)?, q.flagged_slots(div_ceil(tiles, 2))?)
            } else {
                (0, 0)
            };
            args.out("input", job.input).usize(shape.m).usize(shape.n).usize(shape.lda).u32(tile).u32(splits);
            args.u32(job.width).ptr(partials).ptr(tickets);
            job.push_results(&mut args);
            let entry = match job.out {
                Results::Acc(_) => axis_tiles_entry(job.op, job.type_name),
                Results::Arg { .. } if column_word_tracks(job.type_name, shape, strategy, job.width) => {
                    axis_arg_word_tiles_entry(job.op, job.type_name)
                }
                Results::Arg { .. } => axis_arg_tiles_entry(job.op, job.type_name),
            };
            // SAFETY: `axis_tiles_{op}_{T}` takes (input, rows, n, lda, tile, splits, width,
            // partials, tickets, out) and `axis_arg_tiles_{op}_{T}` (…, tickets, values, indices,
            // wide) as pushed, and so does `axis_arg_word_tiles_{op}_{T}` where
            // `column_word_tracks` holds (a vector of columns per thread, splits of at most
            // `WORD_SPLIT_MAX_ROWS` rows); `width` is `column_width`'s; the grid is
            // ⌈n / (tile·width)⌉·splits; with splits > 1, `partials` holds splits·n accumulators
            // and `tickets` a zeroed u32 per column tile (the stream's zeroed slots, which the
            // kernel leaves zero), else both are unused; the outputs hold n results.
            unsafe { q.launch(entry, grid, AXIS_BLOCK, &args)? };
        }
        AxisStrategy::ShortRows => {
            let elem = std::mem::size_of::<T>();
            kernel_for(strategy, "short", &kernels::short_rows::SHORT_ROW_TYPES, job.type_name)?;
            if !rows_aligned(elem, job.input.as_device_ptr().as_raw(), shape) {
                return Err(Error::Unsupported {
                    what: format!("{:?}: rows must start 16-byte aligned (input address and lda·{})", strategy, elem),
                });
            }
            args.out("input", job.input).usize(shape.m).usize(shape.n).usize(shape.lda);
            job.push_results(&mut args);
            let entry = match job.out {
                Results::Acc(_) => axis_short_entry(job.op, job.type_name),
                Results::Arg { .. } => axis_arg_short_entry(job.op, job.type_name),
            };
            // SAFETY: `axis_short_{op}_{T}` takes (input, rows, n, lda, out) and
            // `axis_arg_short_{op}_{T}` (input, rows, n, lda, values, indices, wide) as pushed;
            // every row starts 16-byte aligned (checked above); the shape fits the input; the
            // outputs hold m results; any grid of whole-warp blocks.
            unsafe { q.launch(entry, grid, AXIS_BLOCK, &args)? };
        }
        AxisStrategy::Auto => unreachable!("resolved before enqueueing"),
    }
    if let (Some(f), Some(partials)) = (fold.filter(|f| !f.by_last_piece), partials) {
        let mut args = KernelArgs::new();
        args.ptr(partials).usize(f.items).usize(f.chunks);
        match job.out {
            Results::Acc(out) => args.usize(f.item_stride).usize(f.chunk_stride).ptr(out),
            Results::Arg { values, indices, wide } => args.ptr(values).ptr(indices).u32(wide as u32),
        };
        let grid = fold_grid(&f, q.gpu().max_grid_x());
        // SAFETY: `axis_fold_{op}_{T}` takes (partials, items, chunks, item_stride, chunk_stride,
        // out) as pushed, `axis_arg_fold_{op}_{T}` (partials, items, chunks, values, indices,
        // wide) with item i's chunk k at i·chunks + k, as the plan lays them out; the first
        // launch, before it on this stream, filled them; the outputs hold `items` results.
        unsafe { q.launch(job.entry(FOLD), grid, AXIS_BLOCK, &args)? };
    }
    Ok(())
}

/// Enqueues `job`, one row of n ≥ 1 elements at the input's start (m = 1, or a contiguous
/// column), as the whole-buffer reduction of that row, whose fast path streams one long row
/// faster than a split row and its fold; `false` (nothing enqueued) for arg ops with u32
/// indices, which the whole-buffer reductions do not write.
///
/// # Safety
/// As [`enqueue`].
unsafe fn enqueue_whole_row<T: TypedElement>(q: &mut Enqueue<'_>, job: &Job<'_, T>) -> Result<bool> {
    let row = job.input.index(..job.shape.n);
    match job.out {
        // SAFETY: `out` holds the op's one accumulator for the one row (`enqueue`'s contract).
        Results::Acc(out) => unsafe {
            match TypedOp::ALL[job.op] {
                TypedOp::Sum => enqueue_sum::<T, T::Sum>(q, &row, ResultSlot::device(out), false)?,
                op => enqueue_extreme(q, op, &row, ResultSlot::device(out))?,
            }
        },
        Results::Arg { values, indices, wide: true } => {
            let op = ArgOp::ALONG_AXIS[job.op];
            let out = ArgSlot { values, indices, slot: ResultSlot::device(0) };
            // SAFETY: `values` and `indices` hold one value and one u64 index (`enqueue`'s contract).
            unsafe { enqueue_arg(q, op, &row, out) }?;
        }
        Results::Arg { wide: false, .. } => return Ok(false),
    }
    Ok(true)
}

/// Bytes of one result's accumulator: a `ValueIndex<T>` (16 for every T) for arg ops, else
/// the one output's elements per result.
fn acc_bytes(results: Results, outs: &[Output]) -> usize {
    match results {
        Results::Arg { .. } => std::mem::size_of::<kernels::config::ValueIndex<u64>>(),
        Results::Acc(_) => outs[0].per * outs[0].elem,
    }
}

impl GpuStream {
    /// Checks and enqueues one axis reduction into `outs` (one, or values and indices for
    /// `Results::Arg`), where `results` says the results go; `lent` checks the outputs are
    /// this device's memory.
    #[allow(clippy::too_many_arguments)]
    fn along<T: TypedElement>(
        &self,
        op: usize,
        axis: Axis,
        shape: AxisShape,
        input: &DeviceSlice<T>,
        (outs, results): (&[Output], Results),
        lent: impl FnOnce() -> Result<()>,
        strategy: AxisStrategy,
    ) -> Result<()> {
        shape.check(input.len())?;
        let count = axis.results(shape);
        check_outputs(outs, count, &[("input", Output::read(input))])?;
        let elem = std::mem::size_of::<T>();
        let width = column_width(elem, input.as_device_ptr().as_raw(), shape);
        let auto = strategy == AxisStrategy::Auto;
        let line = axis.line(shape);
        let fold = if matches!(results, Results::Arg { .. }) { AxisFold::Args } else { AxisFold::Values };
        let (shape, strategy) = resolve(axis, shape, elem, fold, width, self.sm_count(), strategy)?;
        let strategy = if auto {
            let strategy = folded_columns(T::NAME, elem, fold, shape, width, self.sm_count(), strategy);
            short_rows(T::NAME, elem, fold, shape, width, strategy)
        } else {
            strategy
        };
        if count == 0 {
            return Ok(());
        }
        lent()?;
        if let (true, 1, Results::Arg { values: 0, indices, wide }) = (auto, line, results) {
            // The index of a line's one element is 0: no kernel reads the input.
            let bytes = count * if wide { 8 } else { 4 };
            // SAFETY: `indices` holds `count` indices of that width (checked, lent above).
            return unsafe { self.lock()?.zero(indices, bytes) };
        }
        let acc_bytes = acc_bytes(results, outs);
        let width = match (strategy, results) {
            (AxisStrategy::Rows { .. }, Results::Acc(out))
                if one_element_rows(shape) && rows_by_vectors(elem, acc_bytes, input.as_device_ptr().as_raw(), out) =>
            {
                (VECTOR_BYTES / elem) as u32
            }
            (AxisStrategy::Rows { .. }, _) => 1,
            _ => width,
        };
        let job = Job { op, type_name: T::NAME, input, shape, width, offsets: None, out: results, acc_bytes };
        let mut q = self.lock()?;
        // SAFETY: `acc_bytes` is the op's accumulator (the callers' types); the outputs hold one
        // result per row or column (checked above, lent for the call); the shape fits the input.
        unsafe {
            if auto && shape.m == 1 && shape.n > 0 && enqueue_whole_row(&mut q, &job)? {
                return Ok(());
            }
            enqueue::<T>(&mut q, job, strategy)
        }
    }

    /// Checks and enqueues one segmented reduction (as [`Self::along`]).
    fn segmented<T: TypedElement>(
        &self,
        op: usize,
        input: &DeviceSlice<T>,
        offsets: &DeviceSlice<u64>,
        (outs, results): (&[Output], Results),
        lent: impl FnOnce() -> Result<()>,
    ) -> Result<()> {
        let m =
            offsets.len().checked_sub(1).ok_or(Error::LengthMismatch { what: "offsets", expected: 1, actual: 0 })?;
        check_outputs(outs, m, &[("input", Output::read(input)), ("offsets", Output::read(offsets))])?;
        if m == 0 {
            return Ok(());
        }
        lent()?;
        let avg = input.len() / m;
        // A lane per four vectors for every op: the arg rows' wider lanes were measured on rows of
        // one length, and a warp's segments here differ in length.
        let strategy =
            AxisStrategy::Rows { lanes: lanes_for(avg * std::mem::size_of::<T>(), AxisFold::Values), chunks: 1 };
        let shape = AxisShape::new(m, 0);
        let acc_bytes = acc_bytes(results, outs);
        let job =
            Job { op, type_name: T::NAME, input, shape, width: 1, offsets: Some(offsets), out: results, acc_bytes };
        // SAFETY: `acc_bytes` is the op's accumulator; the outputs hold m results (checked, lent);
        // the kernel clamps every offset to the input's length.
        unsafe { enqueue::<T>(&mut self.lock()?, job, strategy) }
    }

    /// One typed op's output `out`, `per` accumulators per result.
    #[allow(clippy::too_many_arguments)]
    fn typed_along<T: TypedElement, O: DeviceCopy>(
        &self,
        op: TypedOp,
        axis: Axis,
        shape: AxisShape,
        input: &DeviceSlice<T>,
        out: &mut DeviceSlice<O>,
        per: usize,
        strategy: AxisStrategy,
    ) -> Result<()> {
        let outs = [Output::of("out", out, per)];
        let results = Results::Acc(outs[0].addr);
        self.along(op as usize, axis, shape, input, (&outs, results), || self.check_lent("out", out), strategy)
    }

    /// One typed op's segmented output `out`, `per` accumulators per result.
    fn typed_segmented<T: TypedElement, O: DeviceCopy>(
        &self,
        op: TypedOp,
        input: &DeviceSlice<T>,
        offsets: &DeviceSlice<u64>,
        out: &mut DeviceSlice<O>,
        per: usize,
    ) -> Result<()> {
        let outs = [Output::of("out", out, per)];
        let results = Results::Acc(outs[0].addr);
        self.segmented(op as usize, input, offsets, (&outs, results), || self.check_lent("out", out))
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
        // SAFETY: each slice names its length of elements of device memory, which the borrow
        // keeps allocated while the call enqueues (a later free waits for the queued work).
        unsafe {
            self.sum_along_raw::<T>(
                axis,
                shape,
                input.as_device_ptr().as_raw(),
                input.len(),
                out.as_device_ptr().as_raw(),
                out.len(),
                strategy,
            )
        }
    }

    /// [`GpuStream::sum_along`] on raw device addresses: each buffer as its address and its length in
    /// elements (`name`, `name_len`).
    ///
    /// # Safety
    /// The [raw entry points' contract](crate::raw) for every buffer.
    #[allow(clippy::too_many_arguments)] // an address and a length for each buffer
    pub unsafe fn sum_along_raw<T: TypedElement>(
        &self,
        axis: Axis,
        shape: AxisShape,
        input: u64,
        input_len: usize,
        out: u64,
        out_len: usize,
        strategy: AxisStrategy,
    ) -> Result<()> {
        // SAFETY (each view): the raw contract, the caller's promise.
        let input = &unsafe { view::<T>(input, input_len) };
        let out = &mut unsafe { view::<T::Sum>(out, out_len) };
        self.typed_along(TypedOp::Sum, axis, shape, input, out, 1, strategy)
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
        // SAFETY: each slice names its length of elements of device memory, which the borrow
        // keeps allocated while the call enqueues (a later free waits for the queued work).
        unsafe {
            self.reduce_along_raw::<T>(
                op,
                axis,
                shape,
                input.as_device_ptr().as_raw(),
                input.len(),
                out.as_device_ptr().as_raw(),
                out.len(),
                strategy,
            )
        }
    }

    /// [`GpuStream::reduce_along`] on raw device addresses: each buffer as its address and its length in
    /// elements (`name`, `name_len`).
    ///
    /// # Safety
    /// The [raw entry points' contract](crate::raw) for every buffer.
    #[allow(clippy::too_many_arguments)] // an address and a length for each buffer
    pub unsafe fn reduce_along_raw<T: TypedElement>(
        &self,
        op: TypedOp,
        axis: Axis,
        shape: AxisShape,
        input: u64,
        input_len: usize,
        out: u64,
        out_len: usize,
        strategy: AxisStrategy,
    ) -> Result<()> {
        // SAFETY (each view): the raw contract, the caller's promise.
        let input = &unsafe { view::<T>(input, input_len) };
        let out = &mut unsafe { view::<T>(out, out_len) };
        match op {
            TypedOp::Sum => Err(Error::Unsupported { what: "sum into an element-typed buffer: use sum_along".into() }),
            TypedOp::MinMax => self.typed_along(op, axis, shape, input, out, 2, strategy),
            _ => self.typed_along(op, axis, shape, input, out, 1, strategy),
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
        // SAFETY: each slice names its length of elements of device memory, which the borrow
        // keeps allocated while the call enqueues (a later free waits for the queued work).
        unsafe {
            self.segmented_sum_raw::<T>(
                input.as_device_ptr().as_raw(),
                input.len(),
                offsets.as_device_ptr().as_raw(),
                offsets.len(),
                out.as_device_ptr().as_raw(),
                out.len(),
            )
        }
    }

    /// [`GpuStream::segmented_sum`] on raw device addresses: each buffer as its address and its length in
    /// elements (`name`, `name_len`).
    ///
    /// # Safety
    /// The [raw entry points' contract](crate::raw) for every buffer.
    pub unsafe fn segmented_sum_raw<T: TypedElement>(
        &self,
        input: u64,
        input_len: usize,
        offsets: u64,
        offsets_len: usize,
        out: u64,
        out_len: usize,
    ) -> Result<()> {
        // SAFETY (each view): the raw contract, the caller's promise.
        let input = &unsafe { view::<T>(input, input_len) };
        let offsets = &unsafe { view::<u64>(offsets, offsets_len) };
        let out = &mut unsafe { view::<T::Sum>(out, out_len) };
        self.typed_segmented(TypedOp::Sum, input, offsets, out, 1)
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
        // SAFETY: each slice names its length of elements of device memory, which the borrow
        // keeps allocated while the call enqueues (a later free waits for the queued work).
        unsafe {
            self.segmented_reduce_raw::<T>(
                op,
                input.as_device_ptr().as_raw(),
                input.len(),
                offsets.as_device_ptr().as_raw(),
                offsets.len(),
                out.as_device_ptr().as_raw(),
                out.len(),
            )
        }
    }

    /// [`GpuStream::segmented_reduce`] on raw device addresses: each buffer as its address and its length in
    /// elements (`name`, `name_len`).
    ///
    /// # Safety
    /// The [raw entry points' contract](crate::raw) for every buffer.
    #[allow(clippy::too_many_arguments)] // an address and a length for each buffer
    pub unsafe fn segmented_reduce_raw<T: TypedElement>(
        &self,
        op: TypedOp,
        input: u64,
        input_len: usize,
        offsets: u64,
        offsets_len: usize,
        out: u64,
        out_len: usize,
    ) -> Result<()> {
        // SAFETY (each view): the raw contract, the caller's promise.
        let input = &unsafe { view::<T>(input, input_len) };
        let offsets = &unsafe { view::<u64>(offsets, offsets_len) };
        let out = &mut unsafe { view::<T>(out, out_len) };
        match op {
            TypedOp::Sum => {
                Err(Error::Unsupported { what: "sum into an element-typed buffer: use segmented_sum".into() })
            }
            TypedOp::MinMax => self.typed_segmented(op, input, offsets, out, 2),
            _ => self.typed_segmented(op, input, offsets, out, 1),
        }
    }
}

#[cfg(test)]
mod tests;
