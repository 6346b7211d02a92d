//! [`MultiGpu`]: the devices of one host and their NCCL communicators, one rank each, opened
//! and dropped together.
use super::join::Join;
use crate::error::{Check, Error, Result};
use crate::gpu::Gpu;
use crate::nccl::{Comm, Nccl, NcclVersion, RawStream};
use cust::memory::{DeviceBuffer, DeviceCopy};
use std::sync::{Mutex, MutexGuard};

/// Several devices of one host, one NCCL communicator each. `Send + Sync`; one collective
/// runs at a time (an internal lock).
pub struct MultiGpu {
    /// Per rank, its join scratch.
    join: Mutex<Vec<Join>>,
    pub(super) comms: Vec<Comm>,
    pub(super) nccl: Nccl,
    pub(super) gpus: Vec<Gpu>,
}

// SAFETY: the communicators are used only under the `join` lock, one collective at a time.
unsafe impl Send for MultiGpu {}
unsafe impl Sync for MultiGpu {}

impl MultiGpu {
    /// Joins `gpus` (rank i = `gpus[i]`, distinct devices) with NCCL. `Error::NcclUnavailable`
    /// where NCCL cannot be loaded.
    pub fn new(gpus: Vec<Gpu>) -> Result<MultiGpu> {
        MultiGpu::with_nccl(gpus, Nccl::load()?)
    }

    /// [`MultiGpu::new`] with an NCCL already loaded.
    pub fn with_nccl(gpus: Vec<Gpu>, nccl: Nccl) -> Result<MultiGpu> {
        if gpus.is_empty() {
            return Err(Error::Unsupported { what: "a MultiGpu of no devices".into() });
        }
        let ordinals: Vec<i32> = gpus.iter().map(|g| g.ordinal() as i32).collect();
        if (1..ordinals.len()).any(|i| ordinals[..i].contains(&ordinals[i])) {
            return Err(Error::Unsupported {
                what: format!("devices {:?} repeat one (one rank per device)", ordinals),
            });
        }
        let join = gpus.iter().map(|g| Join::new(g, gpus.len())).collect::<Result<Vec<_>>>()?;
        // Last, so that nothing after it can fail and leave communicators behind.
        let comms = nccl.init_all(&ordinals)?;
        Ok(MultiGpu { join: Mutex::new(join), comms, nccl, gpus })
    }

    /// The devices, in rank order.
    pub fn gpus(&self) -> &[Gpu] {
        &self.gpus
    }

    /// Number of ranks.
    pub fn ranks(&self) -> usize {
        self.gpus.len()
    }

    /// The loaded NCCL's release.
    pub fn nccl_version(&self) -> NcclVersion {
        self.nccl.version()
    }

    /// Splits `host` into `ranks()` contiguous shards as even as can be (the first
    /// `len % ranks` get one more) and uploads shard i to rank i.
    pub fn scatter<T: DeviceCopy>(&self, host: &[T]) -> Result<Vec<DeviceBuffer<T>>> {
        shard_ranges(host.len(), self.ranks())
            .into_iter()
            .zip(&self.gpus)
            .map(|(range, gpu)| upload(gpu, &host[range]))
            .collect()
    }

    /// Waits for every rank's default stream.
    pub fn synchronize(&self) -> Result<()> {
        self.gpus.iter().try_for_each(|g| g.default_stream().synchronize())
    }

    pub(super) fn check_ranks(&self, given: usize) -> Result<()> {
        if given != self.ranks() {
            return Err(Error::LengthMismatch { what: "shards (one per GPU)", expected: self.ranks(), actual: given });
        }
        Ok(())
    }

    /// One collective sequence at a time (the join scratch and communicators are shared).
    pub(super) fn lock(&self) -> MutexGuard<'_, Vec<Join>> {
        self.join.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Rank `rank`'s default stream, as NCCL takes it.
    pub(super) fn raw_stream(&self, rank: usize) -> RawStream {
        self.gpus[rank].default_stream().stream().as_inner() as RawStream
    }

    /// `call(rank)` for every rank inside one NCCL group, each with its device current.
    pub(super) fn group(&self, mut call: impl FnMut(usize) -> Result<()>) -> Result<()> {
        self.nccl.group(|| {
            (0..self.ranks()).try_for_each(|r| {
                self.gpus[r].bind()?;
                call(r)
            })
        })
    }
}

impl Drop for MultiGpu {
    fn drop(&mut self) {
        for (gpu, &comm) in self.gpus.iter().zip(&self.comms) {
            let _ = gpu.bind();
            let _ = gpu.default_stream().synchronize();
            // SAFETY: each communicator was made by init_all and its work is done.
            let _ = unsafe { self.nccl.destroy(comm) };
        }
    }
}

/// The index ranges of `len` elements split into `ranks` contiguous shards, the first
/// `len % ranks` one longer.
pub fn shard_ranges(len: usize, ranks: usize) -> Vec<std::ops::Range<usize>> {
    let (base, extra) = (len / ranks.max(1), len % ranks.max(1));
    let mut start = 0;
    (0..ranks)
        .map(|r| {
            let end = start + base + (r < extra) as usize;
            let range = start..end;
            start = end;
            range
        })
        .collect()
}

/// Uploads `host` to `gpu`'s device.
pub fn upload<T: DeviceCopy>(gpu: &Gpu, host: &[T]) -> Result<DeviceBuffer<T>> {
    gpu.bind()?;
    DeviceBuffer::from_slice(host).check("cuMemcpyHtoD")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_ranges_cover_the_input_evenly() {
        for &(len, ranks) in [(0usize, 1usize), (1, 2), (7, 2), (10, 3), (1 << 20, 8)].iter() {
            let r = shard_ranges(len, ranks);
            assert_eq!(r.len(), ranks);
            assert_eq!(r[0].start, 0);
            assert_eq!(r[ranks - 1].end, len);
            for w in r.windows(2) {
                assert_eq!(w[0].end, w[1].start);
                assert!(w[0].len() == w[1].len() || w[0].len() == w[1].len() + 1);
            }
        }
    }
}
