//! Sums over f32 and i32 with every step of the ladder selectable ([`crate::ladder`]).
use crate::error::{Error, Result};
use crate::gpu::{raw, Gpu};
use crate::ladder::{ladder_index, Finish, ReduceStrategy, SumElement};
use crate::launch::check_len;
use cust::memory::DeviceSlice;
use kernels::config::{finish, FINISH_BLOCK};

impl Gpu {
    /// Sum of `input` (0 for empty input). i32 sums wrap on overflow.
    pub fn reduce_sum<T: SumElement>(&self, input: &DeviceSlice<T>, strategy: ReduceStrategy) -> Result<T> {
        let mut out = crate::error::alloc::<T>(1)?;
        if let Some(v) = self.reduce_sum_into(input, &mut out, strategy)? {
            return Ok(v);
        }
        Ok(self.read_back(&out, 1)?[0])
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
        check_len("input length", input.len())?;
        self.bind()?;
        let (kernel, fin, block, grain) = strategy.resolve(input.len() * std::mem::size_of::<T>());
        let n = input.len();
        let out_ptr = out.as_device_ptr().as_raw();
        if n == 0 {
            if fin == Finish::Host {
                return Ok(Some(T::default()));
            }
            self.zero_first(out)?;
            return Ok(None);
        }
        let grid = kernel.grid(n, block, grain, self.sm_count(), self.max_threads_per_sm());
        let partials = match fin {
            Finish::Flagged => self.flagged_slots(grid as usize)?,
            _ => self.partials(grid as usize * std::mem::size_of::<T>())?,
        };
        let counter = self.counter();
        let mode = match fin {
            Finish::Atomic => finish::ATOMIC,
            Finish::LastBlock => finish::LAST_BLOCK,
            Finish::Flagged => finish::FLAGGED,
            Finish::SecondPass | Finish::Host => finish::PARTIALS,
        };
        if fin == Finish::Atomic {
            self.zero_first(out)?;
        }
        let (ptr, len) = raw(input);
        let name = &self.ladder_names[ladder_index::<T>(kernel, block)];
        self.launch(name, grid, block, &[&ptr, &len, &grain, &mode, &partials, &counter, &out_ptr])?;
        match fin {
            Finish::SecondPass => {
                let name = format!("reduce_finish_{}", T::NAME);
                self.launch(&name, 1, FINISH_BLOCK, &[&partials, &(grid as usize), &out_ptr])?;
                Ok(None)
            }
            Finish::Host => {
                // SAFETY: the partials buffer holds at least `grid` elements of T, written above.
                let slice = unsafe {
                    DeviceSlice::from_raw_parts(cust::memory::DevicePointer::<T>::from_raw(partials), grid as usize)
                };
                Ok(Some(T::host_sum(&self.read_back(&slice, grid as usize)?)))
            }
            Finish::Atomic | Finish::LastBlock | Finish::Flagged => Ok(None),
        }
    }
}
