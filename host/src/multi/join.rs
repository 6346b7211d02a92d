//! A rank's join scratch: named regions of one device allocation, a pinned host slot, and the
//! event a wait polls.
use crate::error::{Check, Result};
use crate::gpu::Gpu;
use cust::event::{Event, EventFlags};
use cust::memory::{DeviceBuffer, DeviceCopy, DevicePointer, DeviceSlice, LockedBuffer};

/// A unit of join scratch: any partial fits one (a minmax's min and max take one each).
pub(super) type Word = u64;

/// Words of the send and result regions: the widest partial or result, a `MinMax<f64>`.
const PAIR_WORDS: usize = 2;

/// One rank's join scratch.
pub(super) struct Join {
    /// This rank's partial as its kernel writes it: a sum, min or max, or a minmax's (min, max)
    /// as two adjacent elements. The gathers read each of [`Join::halves`] from a word's start.
    pub(super) send: DeviceSlice<Word>,
    /// The joined result as the fold writes it: one element, or a minmax's two adjacent.
    pub(super) result: DeviceSlice<Word>,
    /// Every rank's partial (a minmax's min), gathered in rank order, packed.
    pub(super) lo: DeviceSlice<Word>,
    /// Every rank's minmax max, gathered in rank order, packed.
    pub(super) hi: DeviceSlice<Word>,
    /// Page-locked landing place of a region read back: a result, or every rank's word of `lo`.
    pub(super) host: LockedBuffer<Word>,
    /// Recorded on the rank's stream after the work a wait is for, then polled.
    pub(super) mark: Event,
    /// The allocation the regions above lie in.
    _memory: DeviceBuffer<Word>,
}

impl Join {
    /// The zeroed join scratch of `gpu` in a set of `ranks`.
    pub(super) fn new(gpu: &Gpu, ranks: usize) -> Result<Join> {
        gpu.bind()?;
        let lens = [PAIR_WORDS, PAIR_WORDS, ranks, ranks];
        let memory = DeviceBuffer::zeroed(lens.iter().sum()).check("cuMemAlloc")?;
        let [send, result, lo, hi] = carve(&memory, lens);
        let host = LockedBuffer::new(&0, PAIR_WORDS.max(ranks)).check("cuMemAllocHost")?;
        let mark = Event::new(EventFlags::DISABLE_TIMING).check("cuEventCreate")?;
        Ok(Join { send, result, lo, hi, host, mark, _memory: memory })
    }

    /// The send region's words, gathered apart: the partial (a minmax's min), and a minmax's
    /// max once moved there.
    pub(super) fn halves(&self) -> [DeviceSlice<Word>; 2] {
        [self.send.index(..1), self.send.index(1..)]
    }
}

/// Consecutive regions of `lens` words from the start of `memory`.
fn carve<const N: usize>(memory: &DeviceSlice<Word>, lens: [usize; N]) -> [DeviceSlice<Word>; N] {
    let mut start = 0;
    lens.map(|len| {
        let region = memory.index(start..start + len);
        start += len;
        region
    })
}

/// The first `len` elements of type `T` in `region`.
pub(super) fn elements<T: DeviceCopy>(region: &DeviceSlice<Word>, len: usize) -> DeviceSlice<T> {
    let (bytes, room) = (len * std::mem::size_of::<T>(), region.len() * std::mem::size_of::<Word>());
    assert!(bytes <= room, "{} bytes of elements in a region of {}", bytes, room);
    // SAFETY: within the region (checked), word-aligned device memory of the join scratch.
    unsafe { DeviceSlice::from_raw_parts_mut(DevicePointer::from_raw(address(region)), len) }
}

/// The device address of `region`.
pub(super) fn address(region: &DeviceSlice<Word>) -> u64 {
    region.as_device_ptr().as_raw()
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: u64 = 0x7f00_0000_0000;

    /// A region at `BASE`, only ever read for its address and length.
    fn fake(words: usize) -> DeviceSlice<Word> {
        // SAFETY: nothing dereferences it.
        unsafe { DeviceSlice::from_raw_parts(DevicePointer::from_raw(BASE), words) }
    }

    #[test]
    fn regions_follow_each_other_in_order() {
        let [send, result, lo, hi] = carve(&fake(10), [2, 2, 3, 3]);
        let spans: Vec<(u64, usize)> = [send, result, lo, hi].iter().map(|r| (address(r), r.len())).collect();
        assert_eq!(spans, vec![(BASE, 2), (BASE + 16, 2), (BASE + 32, 3), (BASE + 56, 3)]);
    }

    #[test]
    #[should_panic]
    fn regions_past_the_allocation_panic() {
        carve(&fake(9), [2, 2, 3, 3]);
    }

    #[test]
    fn elements_start_at_the_region_and_fit_it() {
        let region = carve(&fake(10), [2, 8])[1];
        let bytes = elements::<u8>(&region, 64);
        assert_eq!((bytes.as_device_ptr().as_raw(), bytes.len()), (BASE + 16, 64));
        assert_eq!(elements::<f64>(&region, 8).len(), 8);
    }

    #[test]
    #[should_panic(expected = "72 bytes of elements in a region of 64")]
    fn elements_past_the_region_panic() {
        elements::<f64>(&carve(&fake(10), [2, 8])[1], 9);
    }
}
