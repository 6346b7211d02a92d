//! Sums over f32 and i32 with every step of the ladder selectable ([`crate::ladder`]).
use crate::entries::finish_entry;
use crate::error::{Error, Result};
use crate::gpu::{raw, Enqueue, GpuStream};
use crate::ladder::{ladder_grid, ladder_index, Finish, ReduceStrategy, SumElement};
use crate::launch::check_grid;
use cust::memory::DeviceSlice;
use kernels::config::{finish, FINISH_BLOCK};

impl GpuStream {
    /// Sum of `input` (0 for empty input). i32 sums wrap on overflow. The kernel stores the
    /// result straight into the stream's pinned host slot (an atomic finish adds into a device
    /// slot, copied there after), and the call waits for this stream only.
    pub fn reduce_sum<T: SumElement>(&self, input: &DeviceSlice<T>, strategy: ReduceStrategy) -> Result<T> {
        strategy.validate()?;
        if input.is_empty() {
            return Ok(T::default());
        }
        let direct = strategy.resolve(input.len() * std::mem::size_of::<T>()).1 != Finish::Atomic;
        let mut q = self.lock()?;
        let out = q.value_slot(direct);
        match enqueue_sum(&mut q, input, out, strategy)? {
            Some(v) => Ok(v),
            None => q.read_value::<T, 1>(direct).map(|[v]| v),
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
        strategy.validate()?;
        if out.is_empty() {
            return Err(Error::LengthMismatch { what: "out", expected: 1, actual: 0 });
        }
        let mut q = self.lock()?;
        enqueue_sum(&mut q, input, out.as_device_ptr().as_raw(), strategy)
    }
}

/// Enqueues the sum of `input` into the device word at `out_ptr` (a validated strategy); with
/// `Finish::Host` waits and returns the value instead.
fn enqueue_sum<T: SumElement>(
    q: &mut Enqueue<'_>,
    input: &DeviceSlice<T>,
    out_ptr: u64,
    strategy: ReduceStrategy,
) -> Result<Option<T>> {
    let size = std::mem::size_of::<T>();
    let (kernel, fin, block, grain) = strategy.resolve(input.len() * size);
    let n = input.len();
    if n == 0 {
        if fin == Finish::Host {
            return Ok(Some(T::default()));
        }
        q.zero(out_ptr, size)?;
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
    let mode = match fin {
        Finish::Atomic => finish::ATOMIC,
        Finish::LastBlock => finish::LAST_BLOCK,
        Finish::Flagged => finish::FLAGGED,
        Finish::SecondPass | Finish::Host => finish::PARTIALS,
    };
    if fin == Finish::Atomic {
        q.zero(out_ptr, size)?;
    }
    let (ptr, len) = raw(input);
    q.launch(
        ladder_index::<T>(kernel, block),
        grid,
        block,
        &[&ptr, &len, &grain, &mode, &partials, &counter, &out_ptr],
    )?;
    match fin {
        Finish::SecondPass => {
            q.launch(finish_entry(T::NAME), 1, FINISH_BLOCK, &[&partials, &(grid as usize), &out_ptr])?;
            Ok(None)
        }
        Finish::Host => Ok(Some(T::host_sum(&q.read_back::<T>(partials, grid as usize)?))),
        Finish::Atomic | Finish::LastBlock | Finish::Flagged => Ok(None),
    }
}
