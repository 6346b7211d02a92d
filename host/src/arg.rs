//! Arg reductions: argmin, argmax and argminmax over every [`TypedElement`] type.
//!
//! - Each result is a [`ValueIndex`]: the value and its index (u64, so inputs past 2^32
//!   elements work); argminmax gives (argmin, argmax).
//! - Ties go to the smallest index. Floats: NaN is the extreme for both argmin and argmax and
//!   the first NaN wins (as `torch.argmax`); -0.0 is below +0.0 and ±inf are ordinary values,
//!   so `argmax(x).value` is bit-equal to `max(x)` (both NaN when any element is, argmax's
//!   with the first NaN's bits).
//! - An empty input is `Error::Empty`. Views may start at any element.
//! - Every call is one deterministic launch (16-byte vector loads, last-block finish). A value
//!   call of at most `ARG_HOST_FOLD_BLOCKS` blocks has each block publish its pair to the host,
//!   which folds them in the kernels' order (the ticket and last-block fold leave its latency).
use crate::entries::arg_entry;
use crate::error::{Error, Result};
use crate::gpu::{byte_span, check_overlap, Enqueue, GpuStream, KernelArgs, ResultSlot};
use crate::launch::{fast_launch, vectorized_grid};
use crate::raw::view;
use crate::typed::TypedElement;
use cust::memory::{DeviceCopy, DeviceSlice};
use kernels::arg_order::{pick, ArgKey, Largest, Smallest};
pub use kernels::config::ValueIndex;
use kernels::config::ARG_HOST_FOLD_BLOCKS;

/// An arg reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArgOp {
    ArgMin,
    ArgMax,
    ArgMinMax,
}

impl ArgOp {
    /// The ops along an axis, in `kernels::axis_arg::AXIS_ARG_OPS` order (an axis job's op number).
    pub(crate) const ALONG_AXIS: [ArgOp; 2] = [ArgOp::ArgMin, ArgOp::ArgMax];

    pub const ALL: [ArgOp; 3] = [ArgOp::ArgMin, ArgOp::ArgMax, ArgOp::ArgMinMax];

    pub fn name(self) -> &'static str {
        kernels::arg::ARG_OPS[self as usize]
    }

    /// Results the op gives: 2 for argminmax (min, then max), else 1.
    pub fn results(self) -> usize {
        if self == ArgOp::ArgMinMax {
            2
        } else {
            1
        }
    }
}

/// The entry point of `op` over element type `T`.
pub fn arg_entry_point<T: TypedElement>(op: ArgOp) -> String {
    format!("{}_{}", op.name(), T::NAME)
}

/// Where an arg kernel stores its result: `values`/`indices` device addresses, or the tagged
/// words of `slot` (with `values`/`indices` unused).
#[derive(Clone, Copy)]
pub(crate) struct ArgSlot {
    pub(crate) values: u64,
    pub(crate) indices: u64,
    pub(crate) slot: ResultSlot,
}

/// Enqueues `op` over `input` storing to `out`, returning the grid; `Error::Empty` on empty
/// input.
///
/// # Safety
/// `out.values`/`out.indices` are 0 or the device-addressable addresses of `op.results()` `T`
/// and u64; `out.slot.tagged` is 0 (then neither address is 0) or the stream's tagged words of
/// one value call; all allocated until the kernel has run.
pub(crate) unsafe fn enqueue_arg<T: TypedElement>(
    q: &mut Enqueue<'_>,
    op: ArgOp,
    input: &DeviceSlice<T>,
    out: ArgSlot,
) -> Result<u32> {
    if input.is_empty() {
        return Err(Error::Empty { op: op.name() });
    }
    let entry = arg_entry(op as usize, T::NAME);
    let bytes = input.len() * std::mem::size_of::<T>();
    let (block, grain) = fast_launch(bytes);
    let gpu = q.gpu();
    let grid = vectorized_grid(bytes, block, grain, gpu.sm_count(), gpu.resident_threads(entry, block)?);
    // A partial is one `ValueIndex<T>` (16 bytes for every T) per result.
    let partials = q.partials(grid as usize * op.results() * std::mem::size_of::<ValueIndex<u64>>())?;
    let counter = q.counter();
    let mut args = KernelArgs::new();
    args.slice("input", input).ptr(partials).ptr(counter).ptr(out.values).ptr(out.indices);
    args.ptr(out.slot.tagged).u32(out.slot.seq);
    // SAFETY: `{op}_{T}` takes `(&[T], partials, counter, values, indices, tagged, seq)`;
    // `partials` holds `op.results()` pairs per block of `grid`, `counter` is the stream's zeroed
    // ticket, the outputs are this function's contract; the block comes from `FAST_LAUNCH`,
    // whole warps up to `MAX_BLOCK` (any grid). The scratch is this stream's, locked in `q`.
    unsafe { q.launch(entry, grid, block, &args) }?;
    Ok(grid)
}

/// The result of a value call whose blocks each published theirs (`ARG_HOST_FOLD_BLOCKS` or
/// fewer), folded in block order by the kernels' own [`pick`]: the pair the last block would
/// pick (the first index of the furthest key wins in any order); argminmax's `[0]` toward the
/// min, `[1]` toward the max.
fn fold_blocks<T: ArgKey, const K: usize>(op: ArgOp, blocks: &[[ValueIndex<T>; K]]) -> [ValueIndex<T>; K] {
    let mut acc = blocks[0];
    for b in &blocks[1..] {
        for (k, (a, &v)) in acc.iter_mut().zip(b).enumerate() {
            let largest = op == ArgOp::ArgMax || (op == ArgOp::ArgMinMax && k == 1);
            *a = if largest { pick::<T, Largest>(*a, v) } else { pick::<T, Smallest>(*a, v) };
        }
    }
    acc
}

fn need<A: DeviceCopy>(what: &'static str, out: &DeviceSlice<A>, len: usize) -> Result<()> {
    if out.len() < len {
        return Err(Error::LengthMismatch { what, expected: len, actual: out.len() });
    }
    Ok(())
}

impl GpuStream {
    /// Enqueues `op` over `input` without waiting: the value(s) to `values`, the index(es) to
    /// `indices` (argminmax: `[0]` = argmin, `[1]` = argmax). Checks the lengths, that the two
    /// outputs do not overlap and that both are this device's memory; `Error::Empty` on empty
    /// input; nothing is launched on an error.
    pub fn arg_into<T: TypedElement>(
        &self,
        op: ArgOp,
        input: &DeviceSlice<T>,
        values: &mut DeviceSlice<T>,
        indices: &mut DeviceSlice<u64>,
    ) -> Result<()> {
        // SAFETY: each slice names its length of elements of device memory, which the borrow
        // keeps allocated while the call enqueues (a later free waits for the queued work).
        unsafe {
            self.arg_into_raw::<T>(
                op,
                input.as_device_ptr().as_raw(),
                input.len(),
                values.as_device_ptr().as_raw(),
                values.len(),
                indices.as_device_ptr().as_raw(),
                indices.len(),
            )
        }
    }

    /// [`GpuStream::arg_into`] on raw device addresses: each buffer as its address and its length in
    /// elements (`name`, `name_len`).
    ///
    /// # Safety
    /// The [raw entry points' contract](crate::raw) for every buffer.
    #[allow(clippy::too_many_arguments)] // an address and a length for each buffer
    pub unsafe fn arg_into_raw<T: TypedElement>(
        &self,
        op: ArgOp,
        input: u64,
        input_len: usize,
        values: u64,
        values_len: usize,
        indices: u64,
        indices_len: usize,
    ) -> Result<()> {
        // SAFETY (each view): the raw contract, the caller's promise.
        let input = &unsafe { view::<T>(input, input_len) };
        let values = &mut unsafe { view::<T>(values, values_len) };
        let indices = &mut unsafe { view::<u64>(indices, indices_len) };
        need("values", values, op.results())?;
        need("indices", indices, op.results())?;
        let (values, indices) = (values.index(..op.results()), indices.index(..op.results()));
        check_overlap("indices", byte_span(&indices), byte_span(&values), "values")?;
        check_overlap("values", byte_span(&values), byte_span(input), "input")?;
        check_overlap("indices", byte_span(&indices), byte_span(input), "input")?;
        self.check_lent("values", &values)?;
        self.check_lent("indices", &indices)?;
        let (values, indices) = (values.as_device_ptr().as_raw(), indices.as_device_ptr().as_raw());
        let out = ArgSlot { values, indices, slot: ResultSlot::device(0) };
        // SAFETY: `values` and `indices` hold `op.results()` elements each (checked above), lent
        // for the enqueue; their free would wait for the kernel.
        unsafe { enqueue_arg(&mut self.lock()?, op, input, out) }.map(|_| ())
    }

    /// [`GpuStream::arg_into`] with [`ArgOp::ArgMin`].
    pub fn argmin_into<T: TypedElement>(
        &self,
        input: &DeviceSlice<T>,
        value: &mut DeviceSlice<T>,
        index: &mut DeviceSlice<u64>,
    ) -> Result<()> {
        // SAFETY: each slice names its length of elements of device memory, which the borrow
        // keeps allocated while the call enqueues (a later free waits for the queued work).
        unsafe {
            self.argmin_into_raw::<T>(
                input.as_device_ptr().as_raw(),
                input.len(),
                value.as_device_ptr().as_raw(),
                value.len(),
                index.as_device_ptr().as_raw(),
                index.len(),
            )
        }
    }

    /// [`GpuStream::argmin_into`] on raw device addresses: each buffer as its address and its length in
    /// elements (`name`, `name_len`).
    ///
    /// # Safety
    /// The [raw entry points' contract](crate::raw) for every buffer.
    pub unsafe fn argmin_into_raw<T: TypedElement>(
        &self,
        input: u64,
        input_len: usize,
        value: u64,
        value_len: usize,
        index: u64,
        index_len: usize,
    ) -> Result<()> {
        // SAFETY (each view): the raw contract, the caller's promise.
        let input = &unsafe { view::<T>(input, input_len) };
        let value = &mut unsafe { view::<T>(value, value_len) };
        let index = &mut unsafe { view::<u64>(index, index_len) };
        self.arg_into(ArgOp::ArgMin, input, value, index)
    }

    /// [`GpuStream::arg_into`] with [`ArgOp::ArgMax`].
    pub fn argmax_into<T: TypedElement>(
        &self,
        input: &DeviceSlice<T>,
        value: &mut DeviceSlice<T>,
        index: &mut DeviceSlice<u64>,
    ) -> Result<()> {
        // SAFETY: each slice names its length of elements of device memory, which the borrow
        // keeps allocated while the call enqueues (a later free waits for the queued work).
        unsafe {
            self.argmax_into_raw::<T>(
                input.as_device_ptr().as_raw(),
                input.len(),
                value.as_device_ptr().as_raw(),
                value.len(),
                index.as_device_ptr().as_raw(),
                index.len(),
            )
        }
    }

    /// [`GpuStream::argmax_into`] on raw device addresses: each buffer as its address and its length in
    /// elements (`name`, `name_len`).
    ///
    /// # Safety
    /// The [raw entry points' contract](crate::raw) for every buffer.
    pub unsafe fn argmax_into_raw<T: TypedElement>(
        &self,
        input: u64,
        input_len: usize,
        value: u64,
        value_len: usize,
        index: u64,
        index_len: usize,
    ) -> Result<()> {
        // SAFETY (each view): the raw contract, the caller's promise.
        let input = &unsafe { view::<T>(input, input_len) };
        let value = &mut unsafe { view::<T>(value, value_len) };
        let index = &mut unsafe { view::<u64>(index, index_len) };
        self.arg_into(ArgOp::ArgMax, input, value, index)
    }

    /// [`GpuStream::arg_into`] with [`ArgOp::ArgMinMax`]: `[0]` = argmin, `[1]` = argmax.
    pub fn argminmax_into<T: TypedElement>(
        &self,
        input: &DeviceSlice<T>,
        values: &mut DeviceSlice<T>,
        indices: &mut DeviceSlice<u64>,
    ) -> Result<()> {
        // SAFETY: each slice names its length of elements of device memory, which the borrow
        // keeps allocated while the call enqueues (a later free waits for the queued work).
        unsafe {
            self.argminmax_into_raw::<T>(
                input.as_device_ptr().as_raw(),
                input.len(),
                values.as_device_ptr().as_raw(),
                values.len(),
                indices.as_device_ptr().as_raw(),
                indices.len(),
            )
        }
    }

    /// [`GpuStream::argminmax_into`] on raw device addresses: each buffer as its address and its length in
    /// elements (`name`, `name_len`).
    ///
    /// # Safety
    /// The [raw entry points' contract](crate::raw) for every buffer.
    pub unsafe fn argminmax_into_raw<T: TypedElement>(
        &self,
        input: u64,
        input_len: usize,
        values: u64,
        values_len: usize,
        indices: u64,
        indices_len: usize,
    ) -> Result<()> {
        // SAFETY (each view): the raw contract, the caller's promise.
        let input = &unsafe { view::<T>(input, input_len) };
        let values = &mut unsafe { view::<T>(values, values_len) };
        let indices = &mut unsafe { view::<u64>(indices, indices_len) };
        self.arg_into(ArgOp::ArgMinMax, input, values, indices)
    }

    /// The smallest value of `input` and its first index; `Error::Empty` when empty. A value
    /// call: the kernel stores the result into the stream's tagged words (as [`GpuStream::sum`]).
    pub fn argmin<T: TypedElement>(&self, input: &DeviceSlice<T>) -> Result<ValueIndex<T>> {
        // SAFETY: each slice names its length of elements of device memory, which the borrow
        // keeps allocated while the call enqueues (a later free waits for the queued work).
        unsafe { self.argmin_raw::<T>(input.as_device_ptr().as_raw(), input.len()) }
    }

    /// [`GpuStream::argmin`] on raw device addresses: each buffer as its address and its length in
    /// elements (`name`, `name_len`).
    ///
    /// # Safety
    /// The [raw entry points' contract](crate::raw) for every buffer.
    pub unsafe fn argmin_raw<T: TypedElement>(&self, input: u64, input_len: usize) -> Result<ValueIndex<T>> {
        // SAFETY (each view): the raw contract, the caller's promise.
        let input = &unsafe { view::<T>(input, input_len) };
        self.arg_value::<T, 1>(ArgOp::ArgMin, input).map(|[v]| v)
    }

    /// The largest value of `input` and its first index; `Error::Empty` when empty.
    pub fn argmax<T: TypedElement>(&self, input: &DeviceSlice<T>) -> Result<ValueIndex<T>> {
        // SAFETY: each slice names its length of elements of device memory, which the borrow
        // keeps allocated while the call enqueues (a later free waits for the queued work).
        unsafe { self.argmax_raw::<T>(input.as_device_ptr().as_raw(), input.len()) }
    }

    /// [`GpuStream::argmax`] on raw device addresses: each buffer as its address and its length in
    /// elements (`name`, `name_len`).
    ///
    /// # Safety
    /// The [raw entry points' contract](crate::raw) for every buffer.
    pub unsafe fn argmax_raw<T: TypedElement>(&self, input: u64, input_len: usize) -> Result<ValueIndex<T>> {
        // SAFETY (each view): the raw contract, the caller's promise.
        let input = &unsafe { view::<T>(input, input_len) };
        self.arg_value::<T, 1>(ArgOp::ArgMax, input).map(|[v]| v)
    }

    /// (argmin, argmax) of `input` in one pass; `Error::Empty` when empty.
    pub fn argminmax<T: TypedElement>(&self, input: &DeviceSlice<T>) -> Result<(ValueIndex<T>, ValueIndex<T>)> {
        // SAFETY: each slice names its length of elements of device memory, which the borrow
        // keeps allocated while the call enqueues (a later free waits for the queued work).
        unsafe { self.argminmax_raw::<T>(input.as_device_ptr().as_raw(), input.len()) }
    }

    /// [`GpuStream::argminmax`] on raw device addresses: each buffer as its address and its length in
    /// elements (`name`, `name_len`).
    ///
    /// # Safety
    /// The [raw entry points' contract](crate::raw) for every buffer.
    pub unsafe fn argminmax_raw<T: TypedElement>(
        &self,
        input: u64,
        input_len: usize,
    ) -> Result<(ValueIndex<T>, ValueIndex<T>)> {
        // SAFETY (each view): the raw contract, the caller's promise.
        let input = &unsafe { view::<T>(input, input_len) };
        let [lo, hi] = self.arg_value::<T, 2>(ArgOp::ArgMinMax, input)?;
        Ok((lo, hi))
    }

    fn arg_value<T: TypedElement, const K: usize>(
        &self,
        op: ArgOp,
        input: &DeviceSlice<T>,
    ) -> Result<[ValueIndex<T>; K]> {
        if input.is_empty() {
            return Err(Error::Empty { op: op.name() });
        }
        let mut q = self.lock()?;
        let slot = q.value_slot(true)?;
        if slot.tagged == 0 {
            return Err(Error::Unsupported {
                what: format!("{} as a value call without unified addressing", op.name()),
            });
        }
        let out = ArgSlot { values: 0, indices: 0, slot };
        // SAFETY: the tagged words are this stream's locked scratch: room for two
        // `ValueIndex<f64>` in 32-bit chunks from each of `ARG_HOST_FOLD_BLOCKS` blocks.
        let grid = unsafe { enqueue_arg(&mut q, op, input, out)? };
        // SAFETY (both): a `ValueIndex<T>` is an integer or float and a u64 (with padding): any
        // bytes of its fields are valid.
        if grid <= ARG_HOST_FOLD_BLOCKS {
            let blocks = unsafe { q.read_tagged::<ValueIndex<T>, K>(slot, grid as usize)? };
            return Ok(fold_blocks(op, &blocks));
        }
        unsafe { q.read_value::<ValueIndex<T>, K>(slot) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arg_entries_match_the_entry_point_names() {
        let names = crate::entries::entry_names();
        for &op in ArgOp::ALL.iter() {
            assert_eq!(names[arg_entry(op as usize, u8::NAME)], arg_entry_point::<u8>(op));
            assert_eq!(names[arg_entry(op as usize, f64::NAME)], arg_entry_point::<f64>(op));
            assert_eq!(names[arg_entry(op as usize, i16::NAME)], arg_entry_point::<i16>(op));
        }
    }

    #[test]
    fn every_pair_is_sixteen_bytes_with_the_index_at_eight() {
        assert_eq!(std::mem::size_of::<ValueIndex<u8>>(), 16);
        assert_eq!(std::mem::size_of::<ValueIndex<f64>>(), 16);
        assert_eq!(std::mem::size_of::<[ValueIndex<f64>; 2]>(), 32);
        let v = ValueIndex { value: 7u16, index: 9 };
        let at = &v.index as *const u64 as usize - &v as *const ValueIndex<u16> as usize;
        assert_eq!(at, 8, "the kernels' chunks put the index at byte 8");
    }

    fn vi<T>(value: T, index: u64) -> ValueIndex<T> {
        ValueIndex { value, index }
    }

    #[test]
    fn blocks_fold_to_the_first_index_of_the_extreme() {
        // Block 2 had no element (the identity: -inf, no index); ties go to the smaller index
        // whatever the block order; the first NaN wins both ways.
        let max = [[vi(2.0f32, 40)], [vi(3.0, 70)], [vi(f32::NEG_INFINITY, u64::MAX)], [vi(3.0, 5)]];
        assert_eq!(fold_blocks(ArgOp::ArgMax, &max), [vi(3.0, 5)]);
        assert_eq!(fold_blocks(ArgOp::ArgMin, &[[vi(-0.0f32, 9)], [vi(0.0, 1)]]), [vi(-0.0, 9)]);
        let nan = [[vi(1.0f64, 3)], [vi(f64::NAN, 12)], [vi(-f64::NAN, 8)]];
        assert_eq!(fold_blocks(ArgOp::ArgMax, &nan)[0].index, 8);
        assert_eq!(fold_blocks(ArgOp::ArgMin, &nan)[0].index, 8);
        let both = [[vi(5u8, 0), vi(5u8, 0)], [vi(1, 17), vi(9, 30)], [vi(1, 16), vi(9, 31)]];
        assert_eq!(fold_blocks(ArgOp::ArgMinMax, &both), [vi(1, 16), vi(9, 30)]);
        assert_eq!(fold_blocks(ArgOp::ArgMax, &[[vi(-7i32, 3)]]), [vi(-7, 3)]);
    }

    #[test]
    fn logits_take_the_host_fold_and_a_mebibyte_the_last_block() {
        // Any GPU keeps at least 64 blocks of 256 threads resident, so no grid here is clamped.
        let grid = |bytes: usize| {
            let (block, grain) = fast_launch(bytes);
            vectorized_grid(bytes, block, grain, 132, 2048)
        };
        for size in [1, 2, 4, 8] {
            let g = grid(128_259 * size);
            assert!((2..=ARG_HOST_FOLD_BLOCKS).contains(&g), "{} bytes per element: {} blocks", size, g);
            assert!(grid(((1 << 20) + 5) * size) > ARG_HOST_FOLD_BLOCKS, "{} bytes per element", size);
        }
    }
}
