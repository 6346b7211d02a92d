//! Typed reductions: sum, min, max and minmax over u8, i8, u16, i16, i32, u32, f32, f64, and the
//! 16-bit floats [`struct@f16`] and [`bf16`] (re-exported from the `half` crate).
//!
//! - Sums accumulate wider: unsigned → u64, signed → i64, f32 → f32 (or f64 with
//!   [`GpuStream::sum_f32_f64acc`]), f64 → f64, f16 and bf16 → f32. A sum of an empty slice is 0.
//! - min, max and minmax of an empty slice are `Error::Empty`.
//! - Floats: NaN propagates (any NaN in the input gives NaN, as `torch.aminmax`); -0.0 orders
//!   below +0.0; ±inf are ordinary values.
//! - Every call is one deterministic launch (16-byte vector loads, last-block finish).
use crate::entries::{f64acc_entry, typed_entry};
use crate::error::{Error, Result};
use crate::gpu::{byte_span, check_overlap, Enqueue, GpuStream, KernelArgs, ResultSlot};
use crate::launch::{fast_launch, vectorized_grid};
use crate::raw::view;
use cust::memory::{DeviceCopy, DeviceSlice};
pub use half::{bf16, f16};
use kernels::arg_order::ArgKey;

/// An element type of the typed reductions (and the arg reductions, which order it by
/// [`ArgKey`]).
pub trait TypedElement: DeviceCopy + Default + Copy + std::fmt::Debug + ArgKey {
    const NAME: &'static str;
    /// The sum's accumulator.
    type Sum: DeviceCopy + bytemuck::Zeroable + Default + Copy + std::fmt::Debug;
    /// Identity of max (`MIN`, or -inf for floats) and of min (`MAX`, or +inf).
    const LOWEST: Self;
    const HIGHEST: Self;
}
macro_rules! typed_element {
    ($($t:ty => $s:ty, $lo:expr, $hi:expr);*) => {$(
        impl TypedElement for $t {
            const NAME: &'static str = stringify!($t);
            type Sum = $s;
            const LOWEST: Self = $lo;
            const HIGHEST: Self = $hi;
        }
    )*};
}
typed_element!(
    u8 => u64, u8::MIN, u8::MAX; u16 => u64, u16::MIN, u16::MAX; u32 => u64, u32::MIN, u32::MAX;
    i8 => i64, i8::MIN, i8::MAX; i16 => i64, i16::MIN, i16::MAX; i32 => i64, i32::MIN, i32::MAX;
    f32 => f32, f32::NEG_INFINITY, f32::INFINITY; f64 => f64, f64::NEG_INFINITY, f64::INFINITY;
    f16 => f32, f16::NEG_INFINITY, f16::INFINITY; bf16 => f32, bf16::NEG_INFINITY, bf16::INFINITY
);

/// A typed reduction operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TypedOp {
    Sum,
    Min,
    Max,
    MinMax,
}

impl TypedOp {
    pub const ALL: [TypedOp; 4] = [TypedOp::Sum, TypedOp::Min, TypedOp::Max, TypedOp::MinMax];
    pub fn name(self) -> &'static str {
        kernels::typed::TYPED_OPS[self as usize]
    }
}

/// The entry point of an op over element type `T`.
pub fn typed_entry_point<T: TypedElement>(op: TypedOp) -> String {
    format!("{}_{}", op.name(), T::NAME)
}

/// Enqueues typed kernel `entry` over `input` (not empty), storing its accumulator to `slot`.
///
/// # Safety
/// `entry` takes `(input: &[T], partials: *mut Acc, counter: *mut u32, out: *mut Acc, tagged:
/// *mut u64, seq: u32)` with an accumulator `Acc` of at most two `A` (a minmax's pair);
/// `slot.out` is the device-addressable address of one `Acc`, `slot.tagged` 0 or that of the
/// tagged words of one `Acc`, both allocated until the kernel has run.
unsafe fn enqueue_typed<T: DeviceCopy, A: DeviceCopy>(
    q: &mut Enqueue<'_>,
    entry: usize,
    input: &DeviceSlice<T>,
    slot: ResultSlot,
) -> Result<()> {
    let bytes = input.len() * std::mem::size_of::<T>();
    let (block, grain) = fast_launch(bytes);
    let gpu = q.gpu();
    // Byte minmax's prefetch takes registers: plan with the threads really resident.
    let grid = vectorized_grid(bytes, block, grain, gpu.sm_count(), gpu.resident_threads(entry, block)?);
    // Partials hold one accumulator per block; a MinMax is at most two of them.
    let partials = q.partials(grid as usize * 2 * std::mem::size_of::<A>())?;
    let counter = q.counter();
    let mut args = KernelArgs::new();
    args.slice("input", input).ptr(partials).ptr(counter).ptr(slot.out).ptr(slot.tagged).u32(slot.seq);
    // SAFETY: the parameters and `slot` are this function's contract; `partials` holds two `A`
    // per block of `grid`, so one `Acc` each; `counter` is the stream's zeroed ticket; the
    // block comes from `FAST_LAUNCH`, whole warps up to `MAX_BLOCK`, as the typed kernels ask
    // (any grid). The scratch is this stream's, locked in `q`.
    unsafe { q.launch(entry, grid, block, &args) }
}

/// Enqueues the sum of `input` (f64-accumulated for f32 when `f64acc`) to `slot`.
///
/// # Safety
/// `A` is the entry's accumulator: `T::Sum`, or f64 with `f64acc` (and `T` = f32); `slot` is
/// as [`enqueue_typed`] asks for one `A`.
pub(crate) unsafe fn enqueue_sum<T: TypedElement, A: DeviceCopy>(
    q: &mut Enqueue<'_>,
    input: &DeviceSlice<T>,
    slot: ResultSlot,
    f64acc: bool,
) -> Result<()> {
    if input.is_empty() {
        // SAFETY: `slot.out` holds one `A` (this function's contract).
        return unsafe { q.zero(slot.out, std::mem::size_of::<A>()) };
    }
    let entry = if f64acc { f64acc_entry() } else { typed_entry(TypedOp::Sum as usize, T::NAME) };
    // SAFETY: `sum_{T}` takes `&[T]` and accumulates in `T::Sum`, `sum_f32_f64acc` takes `&[f32]`
    // and accumulates in f64: `A`, one accumulator, which `slot` takes (this function's contract).
    unsafe { enqueue_typed::<T, A>(q, entry, input, slot) }
}

/// Enqueues min, max or minmax of `input` to `slot`; `Error::Empty` on empty input.
///
/// # Safety
/// `slot` is as [`enqueue_typed`] asks for one `T` (two for minmax).
pub(crate) unsafe fn enqueue_extreme<T: TypedElement>(
    q: &mut Enqueue<'_>,
    op: TypedOp,
    input: &DeviceSlice<T>,
    slot: ResultSlot,
) -> Result<()> {
    if input.is_empty() {
        return Err(Error::Empty { op: op.name() });
    }
    // SAFETY: `{op}_{T}` takes `&[T]` and accumulates in `T` (min, max) or a `MinMax<T>` pair
    // (minmax), which `slot` takes (this function's contract).
    unsafe { enqueue_typed::<T, T>(q, typed_entry(op as usize, T::NAME), input, slot) }
}

/// `out` as a result slot in device memory.
fn device_slot<A: DeviceCopy>(out: &mut DeviceSlice<A>) -> ResultSlot {
    ResultSlot::device(out.as_device_ptr().as_raw())
}

/// `LengthMismatch` unless `out` holds `len` results, `Overlap` if they share a byte with `input`.
pub(crate) fn need_out<A: DeviceCopy, T: DeviceCopy>(
    out: &DeviceSlice<A>,
    len: usize,
    input: &DeviceSlice<T>,
) -> Result<()> {
    if out.len() < len {
        return Err(Error::LengthMismatch { what: "out", expected: len, actual: out.len() });
    }
    check_overlap("out", byte_span(&out.index(..len)), byte_span(input), "input")
}

impl GpuStream {
    /// Enqueues `op` over `input` into `out` without waiting: min/max → `out[0]`; minmax →
    /// `out[0]` = min, `out[1]` = max. Sums need a `T::Sum`-typed `out`: use [`GpuStream::sum_into`].
    /// Empty input: `Error::Empty`.
    pub fn reduce_into<T: TypedElement>(
        &self,
        op: TypedOp,
        input: &DeviceSlice<T>,
        out: &mut DeviceSlice<T>,
    ) -> Result<()> {
        // SAFETY: each slice names its length of elements of device memory, which the borrow
        // keeps allocated while the call enqueues (a later free waits for the queued work).
        unsafe {
            self.reduce_into_raw::<T>(
                op,
                input.as_device_ptr().as_raw(),
                input.len(),
                out.as_device_ptr().as_raw(),
                out.len(),
            )
        }
    }

    /// [`GpuStream::reduce_into`] on raw device addresses: each buffer as its address and its length in
    /// elements (`name`, `name_len`).
    ///
    /// # Safety
    /// The [raw entry points' contract](crate::raw) for every buffer.
    pub unsafe fn reduce_into_raw<T: TypedElement>(
        &self,
        op: TypedOp,
        input: u64,
        input_len: usize,
        out: u64,
        out_len: usize,
    ) -> Result<()> {
        // SAFETY (each view): the raw contract, the caller's promise.
        let input = &unsafe { view::<T>(input, input_len) };
        let out = &mut unsafe { view::<T>(out, out_len) };
        match op {
            TypedOp::Sum => Err(Error::Unsupported { what: "sum into an element-typed buffer: use sum_into".into() }),
            TypedOp::Min | TypedOp::Max | TypedOp::MinMax => {
                need_out(out, if op == TypedOp::MinMax { 2 } else { 1 }, input)?;
                self.check_lent("out", out)?;
                // SAFETY: `out` is a device slice of the one or two `T` the op writes (checked
                // above), lent for the enqueue; its free would wait for the kernel.
                unsafe { enqueue_extreme(&mut self.lock()?, op, input, device_slot(out)) }
            }
        }
    }

    /// Enqueues the sum of `input` into `out[0]` without waiting.
    pub fn sum_into<T: TypedElement>(&self, input: &DeviceSlice<T>, out: &mut DeviceSlice<T::Sum>) -> Result<()> {
        // SAFETY: each slice names its length of elements of device memory, which the borrow
        // keeps allocated while the call enqueues (a later free waits for the queued work).
        unsafe {
            self.sum_into_raw::<T>(input.as_device_ptr().as_raw(), input.len(), out.as_device_ptr().as_raw(), out.len())
        }
    }

    /// [`GpuStream::sum_into`] on raw device addresses: each buffer as its address and its length in
    /// elements (`name`, `name_len`).
    ///
    /// # Safety
    /// The [raw entry points' contract](crate::raw) for every buffer.
    pub unsafe fn sum_into_raw<T: TypedElement>(
        &self,
        input: u64,
        input_len: usize,
        out: u64,
        out_len: usize,
    ) -> Result<()> {
        // SAFETY (each view): the raw contract, the caller's promise.
        let input = &unsafe { view::<T>(input, input_len) };
        let out = &mut unsafe { view::<T::Sum>(out, out_len) };
        need_out(out, 1, input)?;
        self.check_lent("out", out)?;
        // SAFETY: `out` is a device slice of at least one `T::Sum` (checked above), lent for the
        // enqueue; its free would wait for the kernel.
        unsafe { enqueue_sum::<T, T::Sum>(&mut self.lock()?, input, device_slot(out), false) }
    }

    /// Enqueues the f64-accumulated sum of f32 `input` into `out[0]` without waiting.
    pub fn sum_f32_f64acc_into(&self, input: &DeviceSlice<f32>, out: &mut DeviceSlice<f64>) -> Result<()> {
        // SAFETY: each slice names its length of elements of device memory, which the borrow
        // keeps allocated while the call enqueues (a later free waits for the queued work).
        unsafe {
            self.sum_f32_f64acc_into_raw(
                input.as_device_ptr().as_raw(),
                input.len(),
                out.as_device_ptr().as_raw(),
                out.len(),
            )
        }
    }

    /// [`GpuStream::sum_f32_f64acc_into`] on raw device addresses: each buffer as its address and its length in
    /// elements (`name`, `name_len`).
    ///
    /// # Safety
    /// The [raw entry points' contract](crate::raw) for every buffer.
    pub unsafe fn sum_f32_f64acc_into_raw(&self, input: u64, input_len: usize, out: u64, out_len: usize) -> Result<()> {
        // SAFETY (each view): the raw contract, the caller's promise.
        let input = &unsafe { view::<f32>(input, input_len) };
        let out = &mut unsafe { view::<f64>(out, out_len) };
        need_out(out, 1, input)?;
        self.check_lent("out", out)?;
        // SAFETY: `out` is a device slice of at least one f64 (checked above), lent for the
        // enqueue; its free would wait for the kernel.
        unsafe { enqueue_sum::<f32, f64>(&mut self.lock()?, input, device_slot(out), true) }
    }

    /// Sum of `input` in its wider accumulator (0 when empty). Value calls (this and the four
    /// below) have the kernel store the result straight into the stream's page-locked words,
    /// tagged with the call's sequence number, and wait for this stream only; they allocate
    /// nothing once the stream's scratch has grown. u32 sums accumulate in u64: exact for up
    /// to 2^32 + 1 elements ((2^32 + 1)·(2^32 − 1) = 2^64 − 1); a longer input can wrap (the
    /// result is then the sum mod 2^64).
    pub fn sum<T: TypedElement>(&self, input: &DeviceSlice<T>) -> Result<T::Sum> {
        // SAFETY: each slice names its length of elements of device memory, which the borrow
        // keeps allocated while the call enqueues (a later free waits for the queued work).
        unsafe { self.sum_raw::<T>(input.as_device_ptr().as_raw(), input.len()) }
    }

    /// [`GpuStream::sum`] on raw device addresses: each buffer as its address and its length in
    /// elements (`name`, `name_len`).
    ///
    /// # Safety
    /// The [raw entry points' contract](crate::raw) for every buffer.
    pub unsafe fn sum_raw<T: TypedElement>(&self, input: u64, input_len: usize) -> Result<T::Sum> {
        // SAFETY (each view): the raw contract, the caller's promise.
        let input = &unsafe { view::<T>(input, input_len) };
        if input.is_empty() {
            return Ok(T::Sum::default());
        }
        let mut q = self.lock()?;
        let slot = q.value_slot(true)?;
        // SAFETY: the value slot is this stream's locked scratch, with room for any accumulator
        // (`RESULT_WORDS` words; tagged words for a `MinMax<f64>`).
        unsafe { enqueue_sum::<T, T::Sum>(&mut q, input, slot, false)? };
        // SAFETY: every `T::Sum` is u64, i64, f32 or f64.
        unsafe { q.read_value::<T::Sum, 1>(slot) }.map(|[v]| v)
    }

    /// Sum of f32 `input` accumulated in f64.
    pub fn sum_f32_f64acc(&self, input: &DeviceSlice<f32>) -> Result<f64> {
        // SAFETY: each slice names its length of elements of device memory, which the borrow
        // keeps allocated while the call enqueues (a later free waits for the queued work).
        unsafe { self.sum_f32_f64acc_raw(input.as_device_ptr().as_raw(), input.len()) }
    }

    /// [`GpuStream::sum_f32_f64acc`] on raw device addresses: each buffer as its address and its length in
    /// elements (`name`, `name_len`).
    ///
    /// # Safety
    /// The [raw entry points' contract](crate::raw) for every buffer.
    pub unsafe fn sum_f32_f64acc_raw(&self, input: u64, input_len: usize) -> Result<f64> {
        // SAFETY (each view): the raw contract, the caller's promise.
        let input = &unsafe { view::<f32>(input, input_len) };
        if input.is_empty() {
            return Ok(0.0);
        }
        let mut q = self.lock()?;
        let slot = q.value_slot(true)?;
        // SAFETY: the value slot is this stream's locked scratch, with room for the f64.
        unsafe { enqueue_sum::<f32, f64>(&mut q, input, slot, true)? };
        // SAFETY: f64.
        unsafe { q.read_value::<f64, 1>(slot) }.map(|[v]| v)
    }

    /// Minimum of `input`; `Error::Empty` when empty.
    pub fn min<T: TypedElement>(&self, input: &DeviceSlice<T>) -> Result<T> {
        // SAFETY: each slice names its length of elements of device memory, which the borrow
        // keeps allocated while the call enqueues (a later free waits for the queued work).
        unsafe { self.min_raw::<T>(input.as_device_ptr().as_raw(), input.len()) }
    }

    /// [`GpuStream::min`] on raw device addresses: each buffer as its address and its length in
    /// elements (`name`, `name_len`).
    ///
    /// # Safety
    /// The [raw entry points' contract](crate::raw) for every buffer.
    pub unsafe fn min_raw<T: TypedElement>(&self, input: u64, input_len: usize) -> Result<T> {
        // SAFETY (each view): the raw contract, the caller's promise.
        let input = &unsafe { view::<T>(input, input_len) };
        self.extreme::<T, 1>(TypedOp::Min, input).map(|[v]| v)
    }

    /// Maximum of `input`; `Error::Empty` when empty.
    pub fn max<T: TypedElement>(&self, input: &DeviceSlice<T>) -> Result<T> {
        // SAFETY: each slice names its length of elements of device memory, which the borrow
        // keeps allocated while the call enqueues (a later free waits for the queued work).
        unsafe { self.max_raw::<T>(input.as_device_ptr().as_raw(), input.len()) }
    }

    /// [`GpuStream::max`] on raw device addresses: each buffer as its address and its length in
    /// elements (`name`, `name_len`).
    ///
    /// # Safety
    /// The [raw entry points' contract](crate::raw) for every buffer.
    pub unsafe fn max_raw<T: TypedElement>(&self, input: u64, input_len: usize) -> Result<T> {
        // SAFETY (each view): the raw contract, the caller's promise.
        let input = &unsafe { view::<T>(input, input_len) };
        self.extreme::<T, 1>(TypedOp::Max, input).map(|[v]| v)
    }

    /// (minimum, maximum) of `input` in one pass; `Error::Empty` when empty.
    pub fn minmax<T: TypedElement>(&self, input: &DeviceSlice<T>) -> Result<(T, T)> {
        // SAFETY: each slice names its length of elements of device memory, which the borrow
        // keeps allocated while the call enqueues (a later free waits for the queued work).
        unsafe { self.minmax_raw::<T>(input.as_device_ptr().as_raw(), input.len()) }
    }

    /// [`GpuStream::minmax`] on raw device addresses: each buffer as its address and its length in
    /// elements (`name`, `name_len`).
    ///
    /// # Safety
    /// The [raw entry points' contract](crate::raw) for every buffer.
    pub unsafe fn minmax_raw<T: TypedElement>(&self, input: u64, input_len: usize) -> Result<(T, T)> {
        // SAFETY (each view): the raw contract, the caller's promise.
        let input = &unsafe { view::<T>(input, input_len) };
        let [lo, hi] = self.extreme::<T, 2>(TypedOp::MinMax, input)?;
        Ok((lo, hi))
    }

    fn extreme<T: TypedElement, const K: usize>(&self, op: TypedOp, input: &DeviceSlice<T>) -> Result<[T; K]> {
        let mut q = self.lock()?;
        let slot = q.value_slot(true)?;
        // SAFETY: the value slot is this stream's locked scratch, with room for a `MinMax<T>` of
        // the widest T (f64).
        unsafe { enqueue_extreme(&mut q, op, input, slot)? };
        // SAFETY: every `TypedElement` is an integer or float type.
        unsafe { q.read_value::<T, K>(slot) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_entries_match_the_entry_point_names() {
        let names = crate::entries::entry_names();
        for &op in TypedOp::ALL.iter() {
            assert_eq!(names[typed_entry(op as usize, u8::NAME)], typed_entry_point::<u8>(op));
            assert_eq!(names[typed_entry(op as usize, f64::NAME)], typed_entry_point::<f64>(op));
            assert_eq!(names[typed_entry(op as usize, i16::NAME)], typed_entry_point::<i16>(op));
            assert_eq!(names[typed_entry(op as usize, f16::NAME)], typed_entry_point::<f16>(op));
            assert_eq!(names[typed_entry(op as usize, bf16::NAME)], typed_entry_point::<bf16>(op));
        }
    }
}
