//! A stream's scratch: per-block partials, the ticket counter, flagged slots and the value
//! calls' result slots and sequence numbers. Buffers grow by doubling and are then reused; the
//! stream uses them in its own order only (under its lock).
use super::queue::Queue;
use crate::error::{alloc, Check, Result};
use cust::memory::{DeviceBuffer, DeviceCopy, LockedBuffer};
use std::sync::atomic::{AtomicU64, Ordering};

/// 64-bit words of the result slots: the largest value call result, argminmax's two
/// `ValueIndex<f64>`.
pub(super) const RESULT_WORDS: usize = 4;
/// Tagged words one value call result takes at most: argminmax's two `ValueIndex<f64>` in
/// 32-bit chunks.
pub(super) const RESULT_CHUNKS: usize = 8;
/// Tagged words of a stream: one result per block of an arg value call whose blocks publish
/// (`ARG_HOST_FOLD_BLOCKS`).
pub(super) const TAGGED_WORDS: usize = RESULT_CHUNKS * kernels::config::ARG_HOST_FOLD_BLOCKS as usize;

/// Initial size of the partials and flagged scratch (in 64-bit words).
const INITIAL_SCRATCH_WORDS: usize = 1024;

/// Scratch of one stream.
pub(super) struct Scratch {
    partials: DeviceBuffer<u64>,
    /// Zeroed u32 ticket counter of `finish::LAST_BLOCK` (kernels leave it zero).
    counter: DeviceBuffer<u32>,
    /// Zeroed 64-bit slots of `finish::FLAGGED` (kernels leave them zero).
    flagged: DeviceBuffer<u64>,
    /// Where value calls write their result on the device (`RESULT_WORDS` words).
    pub(super) result: DeviceBuffer<u64>,
    /// Page-locked host copy of `result` (`RESULT_WORDS` words).
    pub(super) host: LockedBuffer<u64>,
    /// Page-locked words where value calls' kernels publish their results (`TAGGED_WORDS`),
    /// each a 32-bit chunk under a sequence number (`kernels::publish`). Accessed as atomics only.
    tagged: LockedBuffer<u64>,
    /// The value calls' sequence numbers.
    pub(super) sequence: Sequence,
    /// Value calls whose result did not arrive within the spin and that waited for the stream.
    pub(super) value_fallbacks: usize,
    /// Device allocations made so far (for tests: value calls stop allocating once grown).
    allocations: usize,
}

impl Scratch {
    /// The initial scratch, its zeroing enqueued on `stream`.
    pub(super) fn new(stream: &Queue) -> Result<Scratch> {
        let host = LockedBuffer::new(&0u64, RESULT_WORDS).check("cuMemAllocHost")?;
        // Tag 0, which no value call uses.
        let tagged = LockedBuffer::new(&0u64, TAGGED_WORDS).check("cuMemAllocHost")?;
        let scratch = Scratch {
            partials: alloc(INITIAL_SCRATCH_WORDS)?,
            counter: alloc(1)?,
            flagged: alloc(INITIAL_SCRATCH_WORDS)?,
            result: alloc(RESULT_WORDS)?,
            host,
            tagged,
            sequence: Sequence::default(),
            value_fallbacks: 0,
            allocations: 4,
        };
        zero_async(stream, &scratch.counter)?;
        zero_async(stream, &scratch.flagged)?;
        // A value call copies whole words of the slot; the kernel may write fewer bytes.
        zero_async(stream, &scratch.result)?;
        Ok(scratch)
    }

    /// Device allocations so far.
    pub(super) fn allocations(&self) -> usize {
        self.allocations
    }

    /// A device pointer to `bytes` of scratch for per-block partials. Growing waits for
    /// `stream` first: queued kernels may still use the old buffer.
    pub(super) fn partials(&mut self, stream: &Queue, bytes: usize) -> Result<u64> {
        if let Some(len) = grown_len(self.partials.len(), words(bytes)) {
            wait(stream)?;
            self.partials = alloc(len)?;
            self.allocations += 1;
        }
        Ok(self.partials.as_device_ptr().as_raw())
    }

    /// A device pointer to `slots` zeroed 64-bit slots for `finish::FLAGGED`; grows as
    /// [`Scratch::partials`] does, zeroing the new slots on `stream`.
    pub(super) fn flagged_slots(&mut self, stream: &Queue, slots: usize) -> Result<u64> {
        if let Some(len) = grown_len(self.flagged.len(), slots) {
            wait(stream)?;
            self.flagged = alloc(len)?;
            self.allocations += 1;
            zero_async(stream, &self.flagged)?;
        }
        Ok(self.flagged.as_device_ptr().as_raw())
    }

    /// The zeroed ticket counter of `finish::LAST_BLOCK`.
    pub(super) fn counter(&self) -> u64 {
        self.counter.as_device_ptr().as_raw()
    }

    /// The address of the tagged words, on the host and (unified addressing) the device.
    pub(super) fn tagged_address(&self) -> u64 {
        self.tagged.as_ptr() as u64
    }

    /// The first `n` tagged words.
    pub(super) fn tagged_words(&self, n: usize) -> &[AtomicU64] {
        assert!(n <= TAGGED_WORDS, "a value call's results take at most {} tagged words", TAGGED_WORDS);
        // SAFETY: the page-locked buffer holds `TAGGED_WORDS` u64s, aligned as u64s are (8 bytes
        // on every 64-bit target, as AtomicU64), and lives as long as `self`. The host touches
        // them only through these atomics; kernels store whole aligned words at system scope.
        unsafe { std::slice::from_raw_parts(self.tagged.as_ptr() as *const AtomicU64, n) }
    }

    /// Sets every tagged word to tag 0, which no value call uses (no kernel may still store there).
    pub(super) fn clear_tagged(&self) {
        for w in self.tagged_words(TAGGED_WORDS) {
            w.store(0, Ordering::Relaxed);
        }
    }
}

/// A stream's value call sequence numbers: 1, 2, …, `u32::MAX`, then 1 again. 0 is never
/// issued (the cleared words' tag), and each number is larger than the ones before it within a
/// round, so a word from an earlier call of the round never carries the current number.
#[derive(Debug, Default)]
pub(super) struct Sequence {
    last: u32,
}

impl Sequence {
    /// The numbers that follow `last`.
    pub(super) fn after(last: u32) -> Sequence {
        Sequence { last }
    }

    /// The next number, and whether it starts a new round: words may then still carry it from
    /// the last round, and must be cleared before it is used.
    pub(super) fn next(&mut self) -> (u32, bool) {
        let new_round = self.last == u32::MAX;
        self.last = if new_round { 1 } else { self.last + 1 };
        (self.last, new_round)
    }
}

/// 64-bit words that hold `bytes`.
pub(super) fn words(bytes: usize) -> usize {
    (bytes + 7) / 8
}

/// The length that replaces a buffer of `len` elements asked for `need`: `None` while it holds
/// them, else the next power of two, so that a growing workload reallocates a few times only.
fn grown_len(len: usize, need: usize) -> Option<usize> {
    if len < need {
        Some(need.next_power_of_two())
    } else {
        None
    }
}

/// Waits for `stream`, before a scratch buffer is replaced.
fn wait(stream: &Queue) -> Result<()> {
    stream.synchronize()
}

/// Zeroes `buffer` on `stream` (stream-ordered, so no device-wide wait).
fn zero_async<T: DeviceCopy>(stream: &Queue, buffer: &DeviceBuffer<T>) -> Result<()> {
    let bytes = buffer.len() * std::mem::size_of::<T>();
    // SAFETY: the whole of a live allocation of this stream's scratch, freed only after a wait
    // on the stream.
    unsafe { stream.memset_zero(buffer.as_device_ptr().as_raw(), bytes) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_numbers_rise_skip_zero_and_flag_each_new_round() {
        let mut seq = Sequence::default();
        assert_eq!(seq.next(), (1, false));
        assert_eq!(seq.next(), (2, false));
        let mut seq = Sequence::after(u32::MAX - 1);
        assert_eq!(seq.next(), (u32::MAX, false));
        assert_eq!(seq.next(), (1, true), "after u32::MAX: 1, never 0, and the words must be cleared");
        assert_eq!(seq.next(), (2, false));
        let mut seq = Sequence::default();
        let mut last = 0;
        for _ in 0..100_000 {
            let (n, new_round) = seq.next();
            assert!(n > last && !new_round, "{} after {}", n, last);
            last = n;
        }
    }

    #[test]
    fn words_round_bytes_up() {
        assert_eq!(words(0), 0);
        assert_eq!(words(1), 1);
        assert_eq!(words(8), 1);
        assert_eq!(words(9), 2);
        assert_eq!(words(4 * 1000), 500);
    }

    #[test]
    fn buffers_grow_to_powers_of_two_and_only_when_short() {
        assert_eq!(grown_len(INITIAL_SCRATCH_WORDS, INITIAL_SCRATCH_WORDS), None);
        assert_eq!(grown_len(INITIAL_SCRATCH_WORDS, 1), None);
        assert_eq!(grown_len(INITIAL_SCRATCH_WORDS, INITIAL_SCRATCH_WORDS + 1), Some(2 * INITIAL_SCRATCH_WORDS));
        assert_eq!(grown_len(2048, 5000), Some(8192));
        assert_eq!(grown_len(8192, 8192), None);
    }
}
