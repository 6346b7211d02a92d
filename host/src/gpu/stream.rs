//! [`GpuStream`]: a stream of the library with its own scratch, taken under a lock, and how
//! value calls get their result: from tagged words the kernel stores into page-locked memory.
use super::context::Entered;
use super::dependent_launch::LaunchOverlap;
use super::device::{device_methods, LoadedDevice};
use super::queue::Queue;
use super::scratch::{words, Scratch, Sequence, RESULT_CHUNKS, RESULT_WORDS};
use crate::error::{Check, Error, Result};
use cust::memory::DeviceCopy;
use cust::stream::{Stream, StreamFlags};
use cust::sys::{CUcontext, CUstream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How long a value call spins for its result before it waits for the stream instead.
const VALUE_SPIN: Duration = Duration::from_micros(20);

/// A stream with the library's scratch for it; every entry point is a method of it.
/// Obtained from [`Gpu::new_stream`](super::Gpu::new_stream), for the handle's own from
/// [`Gpu::default_stream`](super::Gpu::default_stream), and for a stream the caller made from
/// [`Gpu::borrow_stream`](super::Gpu::borrow_stream).
///
/// `Send + Sync`. Dropping it waits for its queued work before freeing its scratch.
pub struct GpuStream {
    scratch: Mutex<Scratch>,
    pub(super) stream: Queue,
    pub(super) shared: Arc<LoadedDevice>,
    /// `LaunchOverlap::Auto` (true) or `Serial`.
    overlap: AtomicBool,
}

impl GpuStream {
    pub(super) fn new(shared: Arc<LoadedDevice>) -> Result<GpuStream> {
        shared.bind()?;
        // Blocking on purpose (and cust 0.3.2 drops NON_BLOCKING anyway): a kernel here waits for
        // cust's synchronous copies on the legacy stream, whose pageable DMA may land after they return.
        let stream = Queue::Own(Stream::new(StreamFlags::DEFAULT, None).check("cuStreamCreate")?);
        let scratch = Scratch::new(&stream)?;
        Ok(GpuStream { scratch: Mutex::new(scratch), stream, shared, overlap: AtomicBool::new(true) })
    }

    /// A `GpuStream` that enqueues on the caller's `stream`; `Error::ForeignStream` unless the
    /// stream belongs to the device's primary context.
    ///
    /// # Safety
    /// `stream` is a live stream handle that stays alive until the returned value is dropped.
    pub(super) unsafe fn borrowed(shared: Arc<LoadedDevice>, stream: CUstream) -> Result<GpuStream> {
        let _entered = shared.enter()?;
        let mut context: CUcontext = std::ptr::null_mut();
        // SAFETY: a live stream handle (the caller's promise); one context handle is written.
        super::queue::driver(unsafe { cust::sys::cuStreamGetCtx(stream, &mut context) }).check("cuStreamGetCtx")?;
        if context != shared.context.as_raw() {
            return Err(Error::ForeignStream { ordinal: shared.ordinal });
        }
        let stream = Queue::Caller(stream);
        let scratch = Scratch::new(&stream)?;
        Ok(GpuStream { scratch: Mutex::new(scratch), stream, shared, overlap: AtomicBool::new(true) })
    }

    device_methods!(shared);

    /// The cust stream, for the caller's own copies and events, where the library made it;
    /// `None` for a stream from [`Gpu::borrow_stream`](super::Gpu::borrow_stream).
    pub fn stream(&self) -> Option<&Stream> {
        self.stream.own()
    }

    /// The raw `CUstream` this stream enqueues on (the library's own or the caller's).
    pub fn as_raw(&self) -> CUstream {
        self.stream.raw()
    }

    /// The stream the library made, for its own streams (default streams and
    /// [`Gpu::new_stream`](super::Gpu::new_stream)'s) only.
    pub(crate) fn library_stream(&self) -> &Stream {
        self.stream.own().expect("a stream the library made")
    }

    /// Sets how this stream's kernels start relative to the kernel ahead of them (for the calls
    /// enqueued from now on); [`LaunchOverlap::Auto`] unless set.
    pub fn set_launch_overlap(&self, overlap: LaunchOverlap) {
        self.overlap.store(overlap == LaunchOverlap::Auto, Ordering::Relaxed);
    }

    /// Whether this stream's kernels are now launched while the kernel ahead of them finishes:
    /// [`LaunchOverlap::Auto`] on a device that loaded the sm_90 cubin, with a CUDA 12.3 or later
    /// driver.
    pub fn launches_overlap(&self) -> bool {
        self.overlap_allowed() && self.shared.dependent_launcher.is_some()
    }

    /// Whether the caller left this stream at [`LaunchOverlap::Auto`].
    pub(super) fn overlap_allowed(&self) -> bool {
        self.overlap.load(Ordering::Relaxed)
    }

    /// Waits for everything enqueued on this stream; reports kernel faults.
    pub fn synchronize(&self) -> Result<()> {
        let _entered = self.shared.enter()?;
        self.stream.synchronize()
    }

    /// Device allocations of this stream's scratch so far. Once the scratch has grown to a
    /// workload, further calls allocate nothing.
    pub fn scratch_allocations(&self) -> usize {
        self.lock().map(|g| g.scratch.allocations()).unwrap_or(0)
    }

    /// Value calls of this stream whose result had not arrived when the spin ended, and that
    /// waited for the stream instead (a long kernel, a busy device, a descheduled thread).
    #[doc(hidden)]
    pub fn value_fallbacks(&self) -> usize {
        self.lock().map(|g| g.scratch.value_fallbacks).unwrap_or(0)
    }

    /// Makes `last` this stream's last value call sequence number (for tests of the round
    /// change after `u32::MAX`).
    #[doc(hidden)]
    pub fn set_last_value_sequence(&self, last: u32) -> Result<()> {
        self.lock()?.scratch.sequence = Sequence::after(last);
        Ok(())
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

    /// Where a value call's kernel stores its result. With `publishes` (the kernel's final
    /// result is stored once, by one thread: `LAST_BLOCK`, `FLAGGED`, a second pass) and unified
    /// addressing: the stream's tagged words, under the stream's next sequence number; otherwise
    /// the device result slot (`RESULT_WORDS` words), copied after.
    pub(crate) fn value_slot(&mut self, publishes: bool) -> Result<ResultSlot> {
        let device = ResultSlot::device(self.scratch.result.as_device_ptr().as_raw());
        if !(publishes && self.stream.shared.unified) {
            return Ok(device);
        }
        let (seq, new_round) = self.scratch.sequence.next();
        if new_round {
            // Words may carry this round's numbers from the last one: clear them once no queued
            // kernel can store there.
            self.stream.synchronize()?;
            self.scratch.clear_tagged();
        }
        Ok(ResultSlot { tagged: self.scratch.tagged_address(), seq, ..device })
    }

    /// The value call's `K` results of type `E`, stored where `slot` says (from
    /// [`Enqueue::value_slot`], after the kernel is queued). From tagged words: spins until
    /// every word the result takes carries `slot.seq`, for at most `VALUE_SPIN`, then (a long
    /// kernel, a fault) waits for the stream and reads them as written. From the device slot:
    /// copies it and waits.
    ///
    /// # Safety
    /// `E` is an integer or float type: any bytes of its size are a valid `E`.
    pub(crate) unsafe fn read_value<E: Copy, const K: usize>(&mut self, slot: ResultSlot) -> Result<[E; K]> {
        if slot.tagged == 0 {
            // SAFETY: any bytes are a valid E (this function's contract).
            return unsafe { self.copy_value(K * std::mem::size_of::<E>()) };
        }
        let chunks = chunks_of::<E, K>();
        let mut words = [0u64; RESULT_CHUNKS];
        self.wait_tagged(slot.seq, &mut words[..chunks])?;
        // SAFETY: any bytes are a valid E (this function's contract).
        Ok(unsafe { from_chunks(&words[..chunks]) })
    }

    /// The `K` results of type `E` of each of `blocks` blocks, stored one after another in the
    /// tagged words of `slot` (a value call's; each block's result starts at a whole word):
    /// waited for as in [`Enqueue::read_value`].
    ///
    /// # Safety
    /// As [`Enqueue::read_value`]: any bytes are a valid `E`.
    pub(crate) unsafe fn read_tagged<E: Copy, const K: usize>(
        &mut self,
        slot: ResultSlot,
        blocks: usize,
    ) -> Result<Vec<[E; K]>> {
        assert!(slot.tagged != 0, "tagged words to read");
        let chunks = chunks_of::<E, K>();
        let mut words = vec![0u64; chunks * blocks];
        self.wait_tagged(slot.seq, &mut words)?;
        // SAFETY: any bytes are a valid E (this function's contract).
        Ok(words.chunks_exact(chunks).map(|c| unsafe { from_chunks(c) }).collect())
    }

    /// The first `out.len()` tagged words once each carries tag `seq`: spun for, for at most
    /// `VALUE_SPIN`, then (a long kernel, a fault) read as written after a wait for the stream.
    fn wait_tagged(&mut self, seq: u32, out: &mut [u64]) -> Result<()> {
        let n = out.len();
        if spin_for_tagged(self.scratch.tagged_words(n), seq, VALUE_SPIN, out) {
            return Ok(());
        }
        self.scratch.value_fallbacks += 1;
        self.stream.synchronize()?;
        for (w, t) in out.iter_mut().zip(self.scratch.tagged_words(n)) {
            *w = t.load(Ordering::Acquire);
        }
        let tags_ok = out.iter().all(|&w| tag(w) == seq);
        assert!(tags_ok, "a value call's kernel finished without publishing sequence number {}", seq);
        Ok(())
    }

    /// Copies the device result slot's first `bytes` to the host slot, waits, and reads them.
    ///
    /// # Safety
    /// As [`Enqueue::read_value`]: any bytes are a valid `E`.
    unsafe fn copy_value<E: Copy, const K: usize>(&mut self, bytes: usize) -> Result<[E; K]> {
        let words = words(bytes);
        assert!(words <= RESULT_WORDS, "a value call result is at most {} words", RESULT_WORDS);
        let scratch = &mut *self.scratch;
        let (src, dst) = (scratch.result.as_device_ptr().as_raw(), scratch.host.as_mut_ptr());
        // SAFETY: both slots hold `RESULT_WORDS` ≥ `words` words and live as long as the stream;
        // the copy is waited for below, under the stream's lock.
        unsafe { self.stream.stream.copy_to_host(dst as *mut std::ffi::c_void, src, words * 8) }?;
        self.stream.synchronize()?;
        // SAFETY: the host slot holds `words` ≥ `bytes` bytes, read unaligned; any bytes are a
        // valid E (this function's contract).
        Ok(unsafe { std::ptr::read_unaligned(self.scratch.host.as_ptr() as *const [E; K]) })
    }

    /// Waits for this stream, then copies `len` elements at `ptr` to the host.
    pub(crate) fn read_back<T: DeviceCopy + Default + Copy>(&self, ptr: u64, len: usize) -> Result<Vec<T>> {
        let mut host = vec![T::default(); len];
        let bytes = len * std::mem::size_of::<T>();
        // SAFETY: callers pass `len` elements of T they wrote on this stream; `host` holds as
        // many and outlives the copy, which the wait below finishes.
        unsafe { self.stream.stream.copy_to_host(host.as_mut_ptr() as *mut std::ffi::c_void, ptr, bytes) }?;
        self.stream.synchronize()?;
        Ok(host)
    }
}

/// Where a queued kernel stores its final result: `out` in device memory or, for a value call
/// (`tagged` not 0), the stream's tagged words with the call's sequence number `seq`. Kernels
/// take it as their last three parameters, `(out, tagged, seq)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ResultSlot {
    pub(crate) out: u64,
    pub(crate) tagged: u64,
    pub(crate) seq: u32,
}

impl ResultSlot {
    /// A result stored at the device address `out` only.
    pub(crate) fn device(out: u64) -> ResultSlot {
        ResultSlot { out, tagged: 0, seq: 0 }
    }
}

/// The sequence number a tagged word was stored under (its high half).
fn tag(word: u64) -> u32 {
    (word >> 32) as u32
}

/// Spins until every one of `words` carries tag `seq`, for at most `budget`; whether they all
/// did. Each word is loaded until it carries the tag and is then copied to `out` from that same
/// load, never read again. The kernel stores each word with one aligned 64-bit
/// `st.relaxed.sys` (`kernels::publish`): single-copy atomic at system scope, for every observer
/// of that scope, this CPU included, over PCIe as on coherent (Grace) hosts; this aligned 64-bit
/// atomic load then sees one call's whole word, never halves of two. A chunk travels in the same
/// word as its tag, so no other read depends on an ordering; Acquire costs nothing on x86.
fn spin_for_tagged(words: &[AtomicU64], seq: u32, budget: Duration, out: &mut [u64]) -> bool {
    let start = Instant::now();
    let (mut ready, mut spins) = (0, 0u32);
    while ready < words.len() {
        let w = words[ready].load(Ordering::Acquire);
        if tag(w) == seq {
            out[ready] = w;
            ready += 1;
            continue;
        }
        spins = spins.wrapping_add(1);
        if spins % 256 == 0 && start.elapsed() > budget {
            return false;
        }
        std::hint::spin_loop();
    }
    true
}

/// Tagged words (one 32-bit chunk each) that `K` values of `E` take.
fn chunks_of<E, const K: usize>() -> usize {
    (K * std::mem::size_of::<E>() + 3) / 4
}

/// `K` values of `E` from the 32-bit chunks in the low halves of `words`: chunk `i` holds the
/// result's bytes `4i..4i + 4`, little-endian (as `kernels::publish` cuts them; CUDA's hosts
/// are little-endian).
///
/// # Safety
/// Any bytes are a valid `E` (an integer or float type).
unsafe fn from_chunks<E: Copy, const K: usize>(words: &[u64]) -> [E; K] {
    let mut bytes = [0u8; 4 * RESULT_CHUNKS];
    for (b, &w) in bytes.chunks_exact_mut(4).zip(words) {
        b.copy_from_slice(&(w as u32).to_le_bytes());
    }
    assert!(std::mem::size_of::<[E; K]>() <= 4 * words.len(), "the chunks hold the whole result");
    // SAFETY: `bytes` holds the result's bytes (checked above), read unaligned; any bytes are a
    // valid E (this function's contract).
    unsafe { std::ptr::read_unaligned(bytes.as_ptr() as *const [E; K]) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `value` cut into chunks and tagged with `seq` as `kernels::publish` stores it.
    fn tagged<E: Copy>(value: E, seq: u32) -> Vec<u64> {
        let size = std::mem::size_of::<E>();
        // SAFETY: reads the bytes of a plain value.
        let bytes = unsafe { std::slice::from_raw_parts(&value as *const E as *const u8, size) };
        let mut padded = bytes.to_vec();
        padded.resize((size + 3) / 4 * 4, 0);
        padded.chunks(4).map(|c| (seq as u64) << 32 | u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as u64).collect()
    }

    #[test]
    fn chunks_rebuild_every_result_type_bit_for_bit() {
        let f = f64::from_bits(0xa5a5_a5a5_a5a5_a5a5);
        // SAFETY (all): integers and floats.
        assert_eq!(unsafe { from_chunks::<f64, 1>(&tagged(f, 9)) }[0].to_bits(), f.to_bits());
        assert_eq!(
            unsafe { from_chunks::<f64, 2>(&tagged([f, -0.0f64], 9)) }.map(f64::to_bits),
            [f, -0.0].map(f64::to_bits)
        );
        assert_eq!(unsafe { from_chunks::<i32, 1>(&tagged(0xa5a5_a5a5u32 as i32, 3)) }, [0xa5a5_a5a5u32 as i32]);
        assert_eq!(unsafe { from_chunks::<u8, 2>(&tagged([0xa5u8, 7], 3)) }, [0xa5, 7]);
        assert_eq!(unsafe { from_chunks::<i16, 2>(&tagged([-2i16, 300], 3)) }, [-2, 300]);
        assert_eq!(unsafe { from_chunks::<u64, 1>(&tagged(u64::MAX - 5, 3)) }, [u64::MAX - 5]);
        let pair = |value, index| kernels::config::ValueIndex { value, index };
        let both = [pair(f, u64::MAX - 1), pair(-0.0f64, 1 << 33)];
        assert_eq!(tagged(both, 5).len(), RESULT_CHUNKS, "argminmax of f64 takes the most chunks");
        // SAFETY: f64s and u64s.
        assert_eq!(
            unsafe { from_chunks::<kernels::config::ValueIndex<f64>, 2>(&tagged(both, 5)) }
                .map(|p| (p.value.to_bits(), p.index)),
            both.map(|p| (p.value.to_bits(), p.index))
        );
        assert_eq!(tagged(1u8, 4).len(), 1);
        assert_eq!(tagged([1u32, 2], 4).len(), 2);
    }

    fn atomics(words: &[u64]) -> Vec<AtomicU64> {
        words.iter().map(|&w| AtomicU64::new(w)).collect()
    }

    /// `spin_for_tagged` over `words`: the words it copied when all carry `seq` in time.
    fn spin(words: &[AtomicU64], seq: u32, budget: Duration) -> Option<Vec<u64>> {
        let mut out = vec![0; words.len()];
        spin_for_tagged(words, seq, budget, &mut out).then(|| out)
    }

    #[test]
    fn only_words_under_this_calls_number_are_taken() {
        let budget = Duration::from_micros(200);
        // The last call's words, and a mix of the last and this call's: not taken.
        assert_eq!(spin(&atomics(&tagged([1.5f64, 2.5], 41)), 42, budget), None);
        let mut mixed = tagged([1.5f64, 2.5], 42);
        mixed[3] = tagged([1.5f64, 9.5], 41)[3];
        assert_eq!(spin(&atomics(&mixed), 42, budget), None);
        // Zeroed words carry tag 0, which no call uses.
        assert_eq!(spin(&atomics(&[0; RESULT_CHUNKS]), 1, budget), None);
        let words = spin(&atomics(&tagged([1.5f64, 2.5], 42)), 42, budget).expect("all tagged");
        // SAFETY: f64.
        assert_eq!(unsafe { from_chunks::<f64, 2>(&words) }, [1.5, 2.5]);
    }

    #[test]
    fn chunks_stored_in_any_order_by_another_thread_are_all_waited_for() {
        // Two blocks' results, as a small arg value call publishes them.
        let last = [tagged([0u32, 0], 6), tagged([0u32, 0], 6)].concat();
        let words = Arc::new(atomics(&last));
        let writer = {
            let words = words.clone();
            std::thread::spawn(move || {
                let this = [tagged([0xa5a5_a5a5u32, 17], 7), tagged([3u32, 4], 7)].concat();
                for (i, &w) in this.iter().enumerate().rev() {
                    std::thread::sleep(Duration::from_millis(2));
                    words[i].store(w, Ordering::Release);
                }
            })
        };
        let got = spin(&words, 7, Duration::from_secs(10)).expect("published within the budget");
        writer.join().unwrap();
        // SAFETY: u32.
        assert_eq!(unsafe { from_chunks::<u32, 2>(&got[..2]) }, [0xa5a5_a5a5, 17]);
        assert_eq!(unsafe { from_chunks::<u32, 2>(&got[2..]) }, [3, 4]);
    }
}
