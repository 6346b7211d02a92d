//! Sums over f32 and i32 with every step of the ladder selectable ([`crate::ladder`]).
use crate::entries::finish_entry;
use crate::error::Result;
use crate::gpu::{Enqueue, GpuStream, KernelArgs, ResultSlot};
use crate::ladder::{ladder_grid, ladder_index, Finish, ReduceStrategy, SumElement};
use crate::launch::check_grid;
use crate::raw::view;
use crate::typed::need_out;
use cust::memory::DeviceSlice;
use kernels::config::{finish, FINISH_BLOCK};

impl GpuStream {
    /// Sum of `input` (0 for empty input). i32 sums wrap on overflow. The kernel stores the
    /// result straight into the stream's page-locked words, tagged with the call's sequence
    /// number (an atomic finish adds into a device slot, copied there after), and the call
    /// waits for this stream only.
    pub fn reduce_sum<T: SumElement>(&self, input: &DeviceSlice<T>, strategy: ReduceStrategy) -> Result<T> {
        // SAFETY: each slice names its length of elements of device memory, which the borrow
        // keeps allocated while the call enqueues (a later free waits for the queued work).
        unsafe { self.reduce_sum_raw::<T>(input.as_device_ptr().as_raw(), input.len(), strategy) }
    }

    /// [`GpuStream::reduce_sum`] on raw device addresses: each buffer as its address and its length in
    /// elements (`name`, `name_len`).
    ///
    /// # Safety
    /// The [raw entry points' contract](crate::raw) for every buffer.
    pub unsafe fn reduce_sum_raw<T: SumElement>(
        &self,
        input: u64,
        input_len: usize,
        strategy: ReduceStrategy,
    ) -> Result<T> {
        // SAFETY (each view): the raw contract, the caller's promise.
        let input = &unsafe { view::<T>(input, input_len) };
        strategy.validate()?;
        if input.is_empty() {
            return Ok(T::default());
        }
        let fin = strategy.resolve(input.len() * std::mem::size_of::<T>()).1;
        let mut q = self.lock()?;
        let slot = q.value_slot(matches!(fin, Finish::LastBlock | Finish::Flagged | Finish::SecondPass))?;
        // SAFETY: the value slot is this stream's scratch (locked in `q`, freed only with the
        // stream): the device slot holds `RESULT_WORDS` words ≥ one T, the tagged words (with
        // unified addressing, device-addressable) the chunks of one T.
        match unsafe { enqueue_sum(&mut q, input, slot, strategy)? } {
            Some(v) => Ok(v),
            // SAFETY: T is f32 or i32.
            None => unsafe { q.read_value::<T, 1>(slot) }.map(|[v]| v),
        }
    }

    /// Enqueues the sum of `input` into `out[0]` without waiting, except with `Finish::Host`,
    /// which waits and returns the value (and leaves `out` unwritten).
    pub fn reduce_sum_into<T: SumElement>(
        &self,
        input: &DeviceSlice<T>,
        out: &mut DeviceSlice<T>,
        strategy: ReduceStrategy,
    ) -> Result<Option<T>> {
        // SAFETY: each slice names its length of elements of device memory, which the borrow
        // keeps allocated while the call enqueues (a later free waits for the queued work).
        unsafe {
            self.reduce_sum_into_raw::<T>(
                input.as_device_ptr().as_raw(),
                input.len(),
                out.as_device_ptr().as_raw(),
                out.len(),
                strategy,
            )
        }
    }

    /// [`GpuStream::reduce_sum_into`] on raw device addresses: each buffer as its address and its length in
    /// elements (`name`, `name_len`).
    ///
    /// # Safety
    /// The [raw entry points' contract](crate::raw) for every buffer.
    pub unsafe fn reduce_sum_into_raw<T: SumElement>(
        &self,
        input: u64,
        input_len: usize,
        out: u64,
        out_len: usize,
        strategy: ReduceStrategy,
    ) -> Result<Option<T>> {
        // SAFETY (each view): the raw contract, the caller's promise.
        let input = &unsafe { view::<T>(input, input_len) };
        let out = &mut unsafe { view::<T>(out, out_len) };
        strategy.validate()?;
        need_out(out, 1, input)?;
        self.check_lent("out", out)?;
        let mut q = self.lock()?;
        let slot = ResultSlot::device(out.as_device_ptr().as_raw());
        // SAFETY: `out` is a device slice of at least one T (checked above), borrowed for the
        // enqueue; its free would wait for the kernel (`cuMemFree`).
        unsafe { enqueue_sum(&mut q, input, slot, strategy) }
    }
}

/// Enqueues the sum of `input` to `slot` (a validated strategy); with `Finish::Host` waits and
/// returns the value instead.
///
/// # Safety
/// `slot.out` is the device-addressable address of one T; `slot.tagged` is 0, or (with a
/// `LastBlock`, `Flagged` or `SecondPass` finish) the device-addressable address of the tagged
/// words of one T. Both stay allocated until the queued kernels have run.
unsafe fn enqueue_sum<T: SumElement>(
    q: &mut Enqueue<'_>,
    input: &DeviceSlice<T>,
    slot: ResultSlot,
    strategy: ReduceStrategy,
) -> Result<Option<T>> {
    let size = std::mem::size_of::<T>();
    let (kernel, fin, block, grain) = strategy.resolve(input.len() * size);
    let n = input.len();
    if n == 0 {
        if fin == Finish::Host {
            return Ok(Some(T::default()));
        }
        // SAFETY: `slot.out` holds one T (this function's contract).
        unsafe { q.zero(slot.out, size)? };
        return Ok(None);
    }
    let gpu = q.gpu();
    let grid =
        check_grid(ladder_grid(kernel, n, block, grain, gpu.sm_count(), gpu.max_threads_per_sm()), gpu.max_grid_x())?;
    let partials = match fin {
        Finish::Flagged => q.flagged_slots(grid as usize)?,
        _ => q.partials(grid as usize * size)?,
    };
    let counter = q.counter();
    if fin == Finish::Atomic {
        // SAFETY: `slot.out` holds one T (this function's contract).
        unsafe { q.zero(slot.out, size)? };
    }
    // A second pass's first launch stores partials only; the second stores the result.
    let first = if fin == Finish::SecondPass { ResultSlot::device(slot.out) } else { slot };
    let mut args = KernelArgs::new();
    args.slice("input", input).u32(grain).u32(mode(fin)).ptr(partials).ptr(counter);
    args.ptr(first.out).ptr(first.tagged).u32(first.seq);
    // SAFETY: `ladder_index` names `reduce_{step}_{T}_b{block}`, the instance built for this
    // block size, whose parameters are (input: &[T], grain: u32, mode: u32, partials: *mut T,
    // counter: *mut u32, out: *mut T, tagged: *mut u64, seq: u32), pushed in that order, and
    // `grid` is the step's own launch arithmetic (`LadderKernel::grid`). `input` is a live
    // device slice; `partials` holds one T per block (`Flagged`: a zeroed 64-bit slot each) and
    // `counter` is the zeroed ticket, both this stream's scratch, locked in `q`; `out` holds
    // one T and `tagged` is 0 or, with a finish that stores the result, the words of one T
    // (this function's contract).
    unsafe { q.launch(ladder_index::<T>(kernel, block), grid, block, &args)? };
    match fin {
        Finish::SecondPass => {
            let mut args = KernelArgs::new();
            args.ptr(partials).usize(grid as usize).ptr(slot.out).ptr(slot.tagged).u32(slot.seq);
            // SAFETY: `reduce_finish_{T}` takes (partials: &[T], out: *mut T, tagged: *mut u64,
            // seq: u32) and one block of `FINISH_BLOCK` threads; the partials are the `grid`
            // values the launch above writes first in this stream's order; `slot` holds one T
            // (this function's contract).
            unsafe { q.launch(finish_entry(T::NAME), 1, FINISH_BLOCK, &args)? };
            Ok(None)
        }
        Finish::Host => Ok(Some(T::host_sum(&q.read_back::<T>(partials, grid as usize)?))),
        Finish::Atomic | Finish::LastBlock | Finish::Flagged => Ok(None),
    }
}

/// The kernels' `mode` argument for a finish.
fn mode(fin: Finish) -> u32 {
    match fin {
        Finish::Atomic => finish::ATOMIC,
        Finish::LastBlock => finish::LAST_BLOCK,
        Finish::Flagged => finish::FLAGGED,
        Finish::SecondPass | Finish::Host => finish::PARTIALS,
    }
}
