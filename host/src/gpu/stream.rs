//! [`GpuStream`]: a stream of the library with its own scratch, taken under a lock, and the
//! value calls' result slot.
use super::context::Entered;
use super::device::{device_methods, LoadedDevice};
use super::scratch::{memset_zero, words, Scratch, RESULT_WORDS};
use crate::error::{Check, Result};
use cust::memory::{AsyncCopyDestination, DeviceCopy, DevicePointer, DeviceSlice};
use cust::stream::{Stream, StreamFlags};
use std::sync::{Arc, Mutex, MutexGuard};

/// The byte a value call's pinned slot holds until the kernel stores the result.
const UNWRITTEN: u8 = 0xa5;
/// How long a value call spins for its result before it waits for the stream instead.
const VALUE_SPIN: std::time::Duration = std::time::Duration::from_micros(20);

/// Whether `e`'s bytes differ from the `UNWRITTEN` pattern.
fn written<E>(e: &E) -> bool {
    // SAFETY: reads the bytes of a plain value.
    let bytes = unsafe { std::slice::from_raw_parts(e as *const E as *const u8, std::mem::size_of::<E>()) };
    bytes.iter().any(|&b| b != UNWRITTEN)
}

/// A stream of the library with its own scratch; every entry point is a method of it.
/// Obtained from [`Gpu::new_stream`](super::Gpu::new_stream) or, for the handle's own,
/// [`Gpu::default_stream`](super::Gpu::default_stream).
///
/// `Send + Sync`. Dropping it waits for its queued work before freeing its scratch.
pub struct GpuStream {
    scratch: Mutex<Scratch>,
    pub(super) stream: Stream,
    pub(super) shared: Arc<LoadedDevice>,
}

impl GpuStream {
    pub(super) fn new(shared: Arc<LoadedDevice>) -> Result<GpuStream> {
        shared.bind()?;
        // Blocking on purpose (and cust 0.3.2 drops NON_BLOCKING anyway): a kernel here waits for
        // cust's synchronous copies on the legacy stream, whose pageable DMA may land after they return.
        let stream = Stream::new(StreamFlags::DEFAULT, None).check("cuStreamCreate")?;
        let scratch = Scratch::new(&stream)?;
        Ok(GpuStream { scratch: Mutex::new(scratch), stream, shared })
    }

    device_methods!(shared);

    /// The cust stream, for the caller's own copies and events.
    pub fn stream(&self) -> &Stream {
        &self.stream
    }

    /// Waits for everything enqueued on this stream; reports kernel faults.
    pub fn synchronize(&self) -> Result<()> {
        let _entered = self.shared.enter()?;
        self.stream.synchronize().check("cuStreamSynchronize")
    }

    /// Device allocations of this stream's scratch so far. Once the scratch has grown to a
    /// workload, further calls allocate nothing.
    pub fn scratch_allocations(&self) -> usize {
        self.lock().map(|g| g.scratch.allocations()).unwrap_or(0)
    }

    /// Blocks of `block` threads of entry point `entry` one SM holds at once (registers and
    /// shared memory included), from the driver's occupancy calculator; cached per device.
    pub(crate) fn blocks_per_sm(&self, entry: usize, block: u32) -> Result<u32> {
        self.shared.blocks_per_sm(entry, block)
    }

    /// Threads of entry point `entry` one SM really keeps resident in blocks of `block`
    /// (registers may allow fewer than max_threads_per_sm): what launch plans count.
    pub(crate) fn resident_threads(&self, entry: usize, block: u32) -> Result<u32> {
        Ok((self.blocks_per_sm(entry, block)? * block).min(self.max_threads_per_sm()))
    }

    /// Makes the context current on this thread until the `Enqueue` drops (then the caller's is
    /// current again) and takes the stream's scratch lock: the caller then enqueues in stream
    /// order. A poisoned lock is taken anyway (the scratch stays valid).
    pub(crate) fn lock(&self) -> Result<Enqueue<'_>> {
        let entered = self.shared.enter()?;
        let scratch = self.scratch.lock().unwrap_or_else(|e| e.into_inner());
        Ok(Enqueue { stream: self, scratch, _entered: entered })
    }
}

impl Drop for GpuStream {
    fn drop(&mut self) {
        // Queued kernels may still use the scratch: wait before it is freed (in this context).
        let _ = self.shared.bind();
        let _ = self.stream.synchronize();
    }
}

/// A stream with its scratch locked: what an entry point enqueues through.
pub(crate) struct Enqueue<'a> {
    pub(super) stream: &'a GpuStream,
    scratch: MutexGuard<'a, Scratch>,
    _entered: Entered,
}

impl<'a> Enqueue<'a> {
    pub(crate) fn gpu(&self) -> &GpuStream {
        self.stream
    }

    /// A device pointer to `bytes` of scratch for per-block partials.
    pub(crate) fn partials(&mut self, bytes: usize) -> Result<u64> {
        self.scratch.partials(&self.stream.stream, bytes)
    }

    /// A device pointer to `slots` zeroed 64-bit slots for `finish::FLAGGED`.
    pub(crate) fn flagged_slots(&mut self, slots: usize) -> Result<u64> {
        self.scratch.flagged_slots(&self.stream.stream, slots)
    }

    /// The zeroed ticket counter of `finish::LAST_BLOCK`.
    pub(crate) fn counter(&self) -> u64 {
        self.scratch.counter()
    }

    /// Enqueues zeroing the first `bytes` at `ptr` (a sum over nothing, or an atomic start).
    ///
    /// # Safety
    /// `ptr` is the device-addressable address of at least `bytes` bytes that stay allocated
    /// until the memset has run on this stream.
    pub(crate) unsafe fn zero(&self, ptr: u64, bytes: usize) -> Result<()> {
        // SAFETY: the caller's promise, for this stream.
        unsafe { memset_zero(&self.stream.stream, ptr, bytes) }
    }

    /// Where a value call's kernel writes its result: with `direct` (a kernel that stores its
    /// final result once, at its end) and unified addressing, the pinned host slot itself,
    /// filled first with `UNWRITTEN` bytes so that [`Enqueue::read_value`] sees the store land;
    /// otherwise the device result slot (`RESULT_WORDS` words), copied after.
    pub(crate) fn value_slot(&mut self, direct: bool) -> u64 {
        if direct && self.stream.shared.unified {
            let slot = self.scratch.host.as_mut_ptr() as *mut u8;
            for i in 0..RESULT_WORDS * 8 {
                // SAFETY: within the pinned slot, which no queued kernel writes (the last value
                // call's kernel wrote it once, and its value was read).
                unsafe { std::ptr::write_volatile(slot.add(i), UNWRITTEN) };
            }
            slot as u64
        } else {
            self.scratch.result.as_device_ptr().as_raw()
        }
    }

    /// The value call's `K` results of type `E` from [`Enqueue::value_slot`]`(direct)`. Where the
    /// kernel stores into the pinned slot, the host spins until every element differs from the
    /// `UNWRITTEN` pattern (each is written once, with its final value, after the kernel has
    /// read all its input), for at most `VALUE_SPIN`; then, or where a result may equal the
    /// pattern, or for a copied result, it waits for the stream.
    pub(crate) fn read_value<E: Copy, const K: usize>(&mut self, direct: bool) -> Result<[E; K]> {
        let words = words(K * std::mem::size_of::<E>());
        assert!(words <= RESULT_WORDS, "a value call result is at most {} words", RESULT_WORDS);
        let slot = self.scratch.host.as_ptr() as *const E;
        // SAFETY (both reads): the pinned slot is 8-byte aligned and holds `words` words; E is a
        // plain value type (integers, floats), so any bytes are a valid E.
        let read = || -> [E; K] {
            let mut v = [unsafe { std::ptr::read_volatile(slot) }; K];
            for (k, e) in v.iter_mut().enumerate().skip(1) {
                *e = unsafe { std::ptr::read_volatile(slot.add(k)) };
            }
            v
        };
        if direct && self.stream.shared.unified {
            let start = std::time::Instant::now();
            let mut spins = 0u32;
            loop {
                let v = read();
                if v.iter().all(|e| written(e)) {
                    return Ok(v);
                }
                spins = spins.wrapping_add(1);
                if spins % 256 == 0 && start.elapsed() > VALUE_SPIN {
                    break;
                }
                std::hint::spin_loop();
            }
        } else {
            let scratch = &mut *self.scratch;
            // SAFETY: both slots live as long as the stream; the copy is waited for below.
            unsafe { scratch.result.index(..words).async_copy_to(&mut scratch.host[..words], &self.stream.stream) }
                .check("cuMemcpyDtoHAsync")?;
        }
        self.stream.synchronize()?;
        Ok(read())
    }

    /// Waits for this stream, then copies `len` elements at `ptr` to the host.
    pub(crate) fn read_back<T: DeviceCopy + Default + Copy>(&self, ptr: u64, len: usize) -> Result<Vec<T>> {
        let mut host = vec![T::default(); len];
        self.stream.synchronize()?;
        // SAFETY: callers pass `len` elements of T they wrote on this stream.
        let src = unsafe { DeviceSlice::from_raw_parts(DevicePointer::<T>::from_raw(ptr), len) };
        cust::memory::CopyDestination::copy_to(&src, &mut host[..]).check("cuMemcpyDtoH")?;
        Ok(host)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_written_once_any_byte_leaves_the_pattern() {
        assert!(!written(&u32::from_ne_bytes([UNWRITTEN; 4])));
        assert!(!written(&f64::from_ne_bytes([UNWRITTEN; 8])));
        assert!(!written(&[UNWRITTEN; 16]));
        assert!(written(&0u32));
        assert!(written(&0.0f32));
        let mut one_byte = [UNWRITTEN; 8];
        one_byte[7] = 0;
        assert!(written(&u64::from_ne_bytes(one_byte)));
    }
}
