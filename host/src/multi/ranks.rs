//! [`MultiGpu`]: the devices this process drives and their NCCL communicators, one rank each,
//! opened and dropped together; its collective lock, and the bounded waits that abort on a failure.
use super::join::Join;
use super::wait::{poll_ranks, Progress, DEFAULT_WAIT_LIMIT};
use crate::error::{Check, Error, Result};
use crate::gpu::Gpu;
use crate::nccl::{rank_args, Comm, Nccl, NcclId, NcclVersion, RawStream};
use cust::event::EventStatus;
use cust::memory::{DeviceBuffer, DeviceCopy};
use std::sync::Mutex;
use std::time::Duration;

/// Ranks of one NCCL communicator that this process drives, one device each: every device of
/// the communicator ([`MultiGpu::new`]), or one device of a communicator spread over processes
/// ([`MultiGpu::init_rank`]). `Send + Sync`; one collective runs at a time (an internal lock).
///
/// No call waits on the ranks unboundedly: a rank whose stream faults, whose communicator
/// reports an NCCL error, or whose work outlasts [`MultiGpu::wait_limit`] fails the call with
/// `Error::RankFailed`; every communicator is then aborted, and each later collective call
/// returns that same error at once.
pub struct MultiGpu {
    state: Mutex<State>,
    wait_limit: Duration,
    pub(super) comms: Vec<Comm>,
    pub(super) nccl: Nccl,
    pub(super) gpus: Vec<Gpu>,
    /// The communicator's rank of `gpus[0]`; the others follow it.
    first_rank: usize,
    /// The communicator's ranks, in every process.
    total_ranks: usize,
}

/// What the collective lock guards.
struct State {
    /// Per rank, its join scratch.
    join: Vec<Join>,
    /// The failure that aborted the communicators, if one did.
    failed: Option<Error>,
}

// SAFETY: the communicators are used only under the `state` lock, one collective at a time,
// and never once aborted (`State::failed`).
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
        let state = Mutex::new(State { join, failed: None });
        let total_ranks = gpus.len();
        Ok(MultiGpu { state, wait_limit: DEFAULT_WAIT_LIMIT, comms, nccl, gpus, first_rank: 0, total_ranks })
    }

    /// One process's rank of a communicator spread over processes (one per GPU, as multi-node
    /// programs run): `gpu` becomes rank `rank` of `nranks`, all made from `id`, which one rank
    /// made with [`Nccl::unique_id`] and the caller sent to the others. Blocks until every rank
    /// has called it (NCCL's rule). The collectives then work as with [`MultiGpu::new`]: each
    /// process passes its own shard, and every rank ends with the result. `Error::TooLarge` or
    /// `Error::Unsupported` for a rank outside `0..nranks` or no ranks, before NCCL is called.
    pub fn init_rank(gpu: Gpu, id: &NcclId, nranks: usize, rank: usize) -> Result<MultiGpu> {
        rank_args(nranks, rank)?;
        MultiGpu::init_rank_with_nccl(gpu, Nccl::load()?, id, nranks, rank)
    }

    /// [`MultiGpu::init_rank`] with an NCCL already loaded.
    pub fn init_rank_with_nccl(gpu: Gpu, nccl: Nccl, id: &NcclId, nranks: usize, rank: usize) -> Result<MultiGpu> {
        rank_args(nranks, rank)?;
        let join = vec![Join::new(&gpu, nranks)?];
        gpu.bind()?;
        // Last, so that nothing after it can fail and leave a communicator behind.
        let comms = vec![nccl.init_rank(id, nranks, rank)?];
        let state = Mutex::new(State { join, failed: None });
        let (wait_limit, gpus) = (DEFAULT_WAIT_LIMIT, vec![gpu]);
        Ok(MultiGpu { state, wait_limit, comms, nccl, gpus, first_rank: rank, total_ranks: nranks })
    }

    /// The same, with waits on the ranks bounded by `limit` instead of
    /// [`DEFAULT_WAIT_LIMIT`](crate::multi::DEFAULT_WAIT_LIMIT) (see there for the trade-off).
    pub fn with_wait_limit(mut self, limit: Duration) -> MultiGpu {
        self.wait_limit = limit;
        self
    }

    /// How long a wait on the ranks lasts at most before it fails the call.
    pub fn wait_limit(&self) -> Duration {
        self.wait_limit
    }

    /// The devices, in rank order.
    pub fn gpus(&self) -> &[Gpu] {
        &self.gpus
    }

    /// Number of ranks this process drives (its devices; shards and results are one per rank).
    pub fn ranks(&self) -> usize {
        self.gpus.len()
    }

    /// Number of ranks of the communicator, in every process ([`MultiGpu::ranks`] within one).
    pub fn total_ranks(&self) -> usize {
        self.total_ranks
    }

    /// The communicator's rank of `gpus()[0]` (0 within one process); the others follow it.
    pub fn first_rank(&self) -> usize {
        self.first_rank
    }

    /// Whether the communicator spans processes other than this one.
    pub(super) fn spans_processes(&self) -> bool {
        self.total_ranks > self.gpus.len()
    }

    /// The index in `gpus()` of the communicator's rank `rank`, where this process drives it.
    pub(super) fn local(&self, rank: usize) -> Option<usize> {
        rank.checked_sub(self.first_rank).filter(|&i| i < self.gpus.len())
    }

    /// The loaded NCCL's release.
    pub fn nccl_version(&self) -> NcclVersion {
        self.nccl.version()
    }

    /// Splits `host` into `total_ranks()` contiguous shards as even as can be (the first
    /// `len % total_ranks` get one more) and uploads shard i to rank i: this process's ranks'.
    pub fn scatter<T: DeviceCopy>(&self, host: &[T]) -> Result<Vec<DeviceBuffer<T>>> {
        shard_ranges(host.len(), self.total_ranks)
            .into_iter()
            .skip(self.first_rank)
            .zip(&self.gpus)
            .map(|(range, gpu)| upload(gpu, &host[range]))
            .collect()
    }

    /// Waits for every rank's default stream, within [`MultiGpu::wait_limit`].
    pub fn synchronize(&self) -> Result<()> {
        self.collective(|join| self.wait_all(join))
    }

    pub(super) fn check_ranks(&self, given: usize) -> Result<()> {
        if given != self.ranks() {
            return Err(Error::LengthMismatch { what: "shards (one per GPU)", expected: self.ranks(), actual: given });
        }
        Ok(())
    }

    /// Runs `work` (enqueues on the ranks, and waits) under the collective lock; at once the
    /// failure that aborted the communicators, if one did. When `work` fails to enqueue, the
    /// ranks are let drain first (no rank is left in a collective its peers never joined), and
    /// its error is returned. When a wait fails, every communicator is aborted and the failure
    /// kept for later calls.
    pub(super) fn collective<T>(&self, work: impl FnOnce(&mut [Join]) -> Result<T>) -> Result<T> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(failure) = &state.failed {
            return Err(failure.clone());
        }
        let failure = match work(&mut state.join) {
            Err(failure @ Error::RankFailed { .. }) => failure,
            Err(error) => match self.wait_all(&state.join) {
                Ok(()) => return Err(error),
                Err(failure) => failure,
            },
            done => return done,
        };
        self.abort_all();
        state.failed = Some(failure.clone());
        Err(failure)
    }

    /// Waits until every rank's default stream has run the work enqueued so far: marks each
    /// stream, then polls the marks and the communicators ([`poll_ranks`]), within the limit.
    pub(super) fn wait_all(&self, join: &[Join]) -> Result<()> {
        for (rank, (gpu, j)) in self.gpus.iter().zip(join).enumerate() {
            let marked =
                gpu.bind().and_then(|_| j.mark.record(gpu.default_stream().library_stream()).check("cuEventRecord"));
            marked.map_err(|cause| Error::RankFailed { rank, cause: Box::new(cause) })?;
        }
        poll_ranks(self.ranks(), self.wait_limit, |rank| self.progress(rank, &join[rank]))
    }

    /// Whether rank `rank` has passed its mark; its stream's CUDA error, or, while it runs, its
    /// communicator's NCCL error.
    fn progress(&self, rank: usize, join: &Join) -> Result<Progress> {
        self.gpus[rank].bind()?;
        if join.mark.query().check("cuEventQuery")? == EventStatus::Ready {
            return Ok(Progress::Done);
        }
        // SAFETY: the communicator is live: waits run under the collective lock on a set not
        // marked failed (`collective` and `drop` check), and aborting marks it failed.
        unsafe { self.nccl.async_error(self.comms[rank]) }?;
        Ok(Progress::Running)
    }

    /// Aborts every communicator: their work still on the devices quits.
    fn abort_all(&self) {
        for (gpu, &comm) in self.gpus.iter().zip(&self.comms) {
            let _ = gpu.bind();
            // SAFETY: each communicator is live, and aborted once: the callers then mark the
            // set failed (or are its drop), and no communicator of a failed set is used again.
            let _ = unsafe { self.nccl.abort(comm) };
        }
    }

    /// Rank `rank`'s default stream, as NCCL takes it.
    pub(super) fn raw_stream(&self, rank: usize) -> RawStream {
        self.gpus[rank].default_stream().library_stream().as_inner() as RawStream
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
    /// Waits for the ranks within the limit and destroys the communicators; aborts them where
    /// the wait fails; does neither where a failure aborted them already.
    fn drop(&mut self) {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.failed.is_some() {
            return;
        }
        if self.wait_all(&state.join).is_err() {
            self.abort_all();
            return;
        }
        for (gpu, &comm) in self.gpus.iter().zip(&self.comms) {
            let _ = gpu.bind();
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

/// Uploads `host` to `gpu`'s device ([`GpuStream::upload`](crate::GpuStream::upload) on its
/// default stream).
pub fn upload<T: DeviceCopy>(gpu: &Gpu, host: &[T]) -> Result<DeviceBuffer<T>> {
    gpu.default_stream().upload(host)
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
