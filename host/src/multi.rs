//! Several GPUs of one host joined through NCCL: sharded reductions and row-sharded sgemv.
//!
//! A [`MultiGpu`] holds one [`Gpu`] per device (rank i = the i-th) and one NCCL communicator
//! each; NCCL is loaded when it is built ([`crate::nccl`]). Every collective runs on each
//! rank's default stream, so it is ordered with that rank's kernels.
//!
//! How partial results are joined:
//! - **Integer sums**: an NCCL all-reduce (`ncclSum`), exact in any order.
//! - **Float sums, min, max, minmax**: an NCCL all-gather of every rank's partial, then each
//!   rank folds the gathered values with the library's own kernel, in rank order. Floats are
//!   then deterministic (same shards, same bits), and min/max keep the library's NaN and ±0
//!   semantics, which NCCL's min/max do not have (nor its 16-bit integer types).
//!
//! Every rank ends with the result; value calls return each rank's, in rank order.
use crate::error::{Check, Error, Result};
use crate::gpu::{raw, Gpu, GpuStream};
use crate::ladder::{ReduceStrategy, SumElement};
use crate::nccl::{Comm, DataType, Nccl, RawStream, RedOp};
use crate::sgemv::{validate_sgemv, Op, SgemvOptions};
use crate::typed::{TypedElement, TypedOp};
use cust::memory::{AsyncCopyDestination, DeviceBuffer, DeviceCopy, DevicePointer, DeviceSlice, LockedBuffer};
use std::sync::{Mutex, MutexGuard};

/// Word offsets in a rank's join buffer: the partial to send (two words: a `MinMax<f64>`),
/// the folded result (two words), then the gathered minima (or sums) from `LO` and the maxima
/// from `LO + ranks`, one word per rank each (a partial is at most 8 bytes: minmax gathers
/// its halves apart).
const SEND: usize = 0;
const RESULT: usize = 2;
const LO: usize = 4;

/// One rank's join scratch: device words as laid out above, and a pinned host slot.
struct Join {
    device: DeviceBuffer<u64>,
    host: LockedBuffer<u64>,
}

/// Several devices of one host, one NCCL communicator each. `Send + Sync`; one collective
/// runs at a time (an internal lock).
pub struct MultiGpu {
    /// Per rank, its join scratch.
    join: Mutex<Vec<Join>>,
    comms: Vec<Comm>,
    nccl: Nccl,
    gpus: Vec<Gpu>,
}

// SAFETY: the communicators are used only under the `join` lock, one collective at a time.
unsafe impl Send for MultiGpu {}
unsafe impl Sync for MultiGpu {}

/// One GPU's part of a row-sharded sgemv: its `rows` rows of A (row-major, `opts.lda` or n
/// apart), a full-length `x` (rank 0's holds the input; [`MultiGpu::sgemv_rows`] broadcasts it
/// into the others) and its rows of `y`.
pub struct RowShard<'a> {
    pub rows: usize,
    pub a: &'a DeviceSlice<f32>,
    pub x: &'a mut DeviceSlice<f32>,
    pub y: &'a mut DeviceSlice<f32>,
}

/// How the ranks' partial sums of one accumulator type are joined (see the module doc).
pub trait JoinSum: DeviceCopy + Default + Copy {
    /// `Some(type)` for an exact NCCL all-reduce; `None` to gather and fold on the device.
    const ALL_REDUCE: Option<DataType>;
    /// Enqueues folding the gathered partials on `gpu`'s default stream into `out[0]`, in rank
    /// order (only where `ALL_REDUCE` is None).
    fn fold_into(gpu: &Gpu, gathered: &DeviceSlice<Self>, out: &mut DeviceSlice<Self>) -> Result<()>;
}
macro_rules! join_exact {
    ($($t:ty => $d:expr),*) => {$(
        impl JoinSum for $t {
            const ALL_REDUCE: Option<DataType> = Some($d);
            fn fold_into(_: &Gpu, _: &DeviceSlice<Self>, _: &mut DeviceSlice<Self>) -> Result<()> {
                unreachable!("integer sums join by all-reduce")
            }
        }
    )*};
}
join_exact!(u64 => DataType::U64, i64 => DataType::I64, i32 => DataType::I32);
impl JoinSum for f32 {
    const ALL_REDUCE: Option<DataType> = None;
    fn fold_into(gpu: &Gpu, gathered: &DeviceSlice<f32>, out: &mut DeviceSlice<f32>) -> Result<()> {
        gpu.default_stream().reduce_sum_into(gathered, out, ReduceStrategy::Auto).map(|_| ())
    }
}
impl JoinSum for f64 {
    const ALL_REDUCE: Option<DataType> = None;
    fn fold_into(gpu: &Gpu, gathered: &DeviceSlice<f64>, out: &mut DeviceSlice<f64>) -> Result<()> {
        gpu.default_stream().sum_into(gathered, out)
    }
}

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
        let words = LO + 2 * gpus.len();
        let join = gpus
            .iter()
            .map(|g| {
                g.bind()?;
                let device = DeviceBuffer::zeroed(words).check("cuMemAlloc")?;
                Ok(Join { device, host: LockedBuffer::new(&0u64, 2).check("cuMemAllocHost")? })
            })
            .collect::<Result<Vec<_>>>()?;
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

    /// NCCL's version code.
    pub fn nccl_version(&self) -> i32 {
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

    /// Sum over all shards (shard i on rank i; any may be empty), as each rank ends with it.
    pub fn sum<T: TypedElement>(&self, shards: &[&DeviceSlice<T>]) -> Result<Vec<T::Sum>>
    where
        T::Sum: JoinSum,
    {
        self.join_sum(shards, |stream, shard, out| stream.sum_into(shard, out))
    }

    /// [`MultiGpu::sum`] for the ladder's element types with `Auto`'s kernel on every rank.
    pub fn reduce_sum<T: SumElement + JoinSum>(&self, shards: &[&DeviceSlice<T>]) -> Result<Vec<T>> {
        self.join_sum(shards, |stream, shard, out| stream.reduce_sum_into(shard, out, ReduceStrategy::Auto).map(|_| ()))
    }

    /// Minimum over all shards; `Error::Empty` when every shard is empty.
    pub fn min<T: TypedElement>(&self, shards: &[&DeviceSlice<T>]) -> Result<Vec<T>> {
        Ok(self.join_extreme(TypedOp::Min, shards)?.into_iter().map(|(v, _)| v).collect())
    }

    /// Maximum over all shards; `Error::Empty` when every shard is empty.
    pub fn max<T: TypedElement>(&self, shards: &[&DeviceSlice<T>]) -> Result<Vec<T>> {
        Ok(self.join_extreme(TypedOp::Max, shards)?.into_iter().map(|(v, _)| v).collect())
    }

    /// (min, max) over all shards; `Error::Empty` when every shard is empty.
    pub fn minmax<T: TypedElement>(&self, shards: &[&DeviceSlice<T>]) -> Result<Vec<(T, T)>> {
        self.join_extreme(TypedOp::MinMax, shards)
    }

    /// Enqueues a row-sharded `y = alpha·A·x + beta·y` (`Op::N`): x is broadcast from rank 0
    /// into every rank's `x`, then each rank computes its rows. Row counts may differ (and be
    /// 0). Every shard is validated before anything is enqueued. Does not wait; see
    /// [`MultiGpu::gather_rows`] to give every rank the whole y.
    pub fn sgemv_rows(&self, n: usize, shards: &mut [RowShard<'_>], opts: SgemvOptions) -> Result<()> {
        self.check_ranks(shards.len())?;
        if opts.op != Op::N {
            return Err(Error::Unsupported { what: "row-sharded sgemv of Op::T (shard the columns instead)".into() });
        }
        let lda = opts.lda.unwrap_or(n);
        for s in shards.iter() {
            validate_sgemv(s.rows, n, lda, raw(s.a), raw(s.x), s.y.len())?;
        }
        let xs: Vec<u64> = shards.iter().map(|s| s.x.as_device_ptr().as_raw()).collect();
        let _guard = self.lock();
        // SAFETY: every rank's x holds n floats on its device (validated above).
        unsafe { self.broadcast_raw(0, &xs, 4 * n)? };
        // In rank order: launching the waiting ranks first measured slower on 2 × H200
        // (2026-11-22: 172.1 µs per call against 156–158).
        for (gpu, s) in self.gpus.iter().zip(shards.iter_mut()) {
            gpu.default_stream().sgemv(s.rows, n, s.a, s.x, s.y, opts)?;
        }
        Ok(())
    }

    /// Enqueues copying rank `root`'s `bufs[root]` into every other rank's buffer (one NCCL
    /// broadcast; all of `bufs`, one per rank, must have the same length).
    pub fn broadcast<T: DeviceCopy>(&self, root: usize, bufs: &mut [&mut DeviceSlice<T>]) -> Result<()> {
        self.check_ranks(bufs.len())?;
        if root >= self.ranks() {
            return Err(Error::Unsupported { what: format!("root rank {} of {}", root, self.ranks()) });
        }
        let len = bufs[root].len();
        if let Some(b) = bufs.iter().find(|b| b.len() != len) {
            return Err(Error::LengthMismatch { what: "broadcast buffer", expected: len, actual: b.len() });
        }
        let ptrs: Vec<u64> = bufs.iter().map(|b| b.as_device_ptr().as_raw()).collect();
        let _guard = self.lock();
        // SAFETY: every buffer holds `len` elements on its rank's device (checked above).
        unsafe { self.broadcast_raw(root, &ptrs, len * std::mem::size_of::<T>()) }
    }

    /// One NCCL broadcast of `bytes` from `ptrs[root]` into every rank's `ptrs[r]`, in place.
    ///
    /// # Safety
    /// `ptrs[r]` holds `bytes` bytes on rank r's device; the caller holds the join lock.
    unsafe fn broadcast_raw(&self, root: usize, ptrs: &[u64], bytes: usize) -> Result<()> {
        self.group(|r| {
            let p = ptrs[r];
            self.nccl.broadcast(p, p, bytes, DataType::U8, root as i32, self.comms[r], self.raw_stream(r))
        })
    }

    /// Enqueues copying every rank's rows of y (`shards[i].y`, in rank order) into each rank's
    /// `full` y, whose length must be the sum of the row counts.
    pub fn gather_rows(&self, shards: &[RowShard<'_>], full: &mut [&mut DeviceSlice<f32>]) -> Result<()> {
        self.check_ranks(shards.len())?;
        self.check_ranks(full.len())?;
        let m: usize = shards.iter().map(|s| s.rows).sum();
        for (s, f) in shards.iter().zip(full.iter()) {
            if s.y.len() != s.rows {
                return Err(Error::LengthMismatch { what: "y", expected: s.rows, actual: s.y.len() });
            }
            if f.len() != m {
                return Err(Error::LengthMismatch { what: "full y", expected: m, actual: f.len() });
            }
        }
        let _guard = self.lock();
        let mut offset = 0;
        for (root, s) in shards.iter().enumerate() {
            if s.rows > 0 {
                let send = s.y.as_device_ptr().as_raw();
                self.group(|r| {
                    let recv = full[r].as_device_ptr().as_raw() + 4 * offset as u64;
                    // SAFETY: `send` holds `rows` floats on the root's device; each `recv`
                    // holds them from `offset` on its own device (lengths checked above).
                    unsafe {
                        self.nccl.broadcast(
                            send,
                            recv,
                            4 * s.rows,
                            DataType::U8,
                            root as i32,
                            self.comms[r],
                            self.raw_stream(r),
                        )
                    }
                })?;
            }
            offset += s.rows;
        }
        Ok(())
    }

    fn check_ranks(&self, given: usize) -> Result<()> {
        if given != self.ranks() {
            return Err(Error::LengthMismatch { what: "shards (one per GPU)", expected: self.ranks(), actual: given });
        }
        Ok(())
    }

    /// One collective sequence at a time (the join buffers and communicators are shared).
    fn lock(&self) -> MutexGuard<'_, Vec<Join>> {
        self.join.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn raw_stream(&self, rank: usize) -> RawStream {
        self.gpus[rank].default_stream().stream().as_inner() as RawStream
    }

    /// `call(rank)` for every rank inside one NCCL group, each with its device current.
    fn group(&self, mut call: impl FnMut(usize) -> Result<()>) -> Result<()> {
        self.nccl.group(|| {
            (0..self.ranks()).try_for_each(|r| {
                self.gpus[r].bind()?;
                call(r)
            })
        })
    }

    /// Each rank enqueues its shard's sum into its send slot (`partial`), then the ranks join:
    /// an all-reduce in place, or a gather and a fold into the result slot.
    fn join_sum<T: DeviceCopy, S: JoinSum>(
        &self,
        shards: &[&DeviceSlice<T>],
        partial: impl Fn(&GpuStream, &DeviceSlice<T>, &mut DeviceSlice<S>) -> Result<()>,
    ) -> Result<Vec<S>> {
        self.check_ranks(shards.len())?;
        let mut join = self.lock();
        for ((gpu, shard), j) in self.gpus.iter().zip(shards).zip(join.iter()) {
            partial(gpu.default_stream(), shard, &mut view::<S>(&j.device, SEND, 1))?;
        }
        let ranks = self.ranks();
        let at = match S::ALL_REDUCE {
            Some(dtype) => {
                self.group(|r| {
                    let slot = word(&join[r].device, SEND);
                    // SAFETY: each rank's send slot holds one S on its device.
                    unsafe { self.nccl.all_reduce(slot, slot, 1, dtype, RedOp::Sum, self.comms[r], self.raw_stream(r)) }
                })?;
                SEND
            }
            None => {
                self.gather(&join, &[(SEND, LO)], std::mem::size_of::<S>())?;
                for (gpu, j) in self.gpus.iter().zip(join.iter()) {
                    S::fold_into(gpu, &view(&j.device, LO, ranks), &mut view(&j.device, RESULT, 1))?;
                }
                RESULT
            }
        };
        Ok(self.read_all::<[S; 1]>(&mut join, at)?.into_iter().map(|[v]| v).collect())
    }

    /// Each rank enqueues its shard's min/max/minmax into its send slot (the identities for an
    /// empty shard), the ranks all-gather the minima and the maxima, and each rank folds them.
    fn join_extreme<T: TypedElement>(&self, op: TypedOp, shards: &[&DeviceSlice<T>]) -> Result<Vec<(T, T)>> {
        self.check_ranks(shards.len())?;
        if shards.iter().all(|s| s.is_empty()) {
            return Err(Error::Empty { op: op.name() });
        }
        let per_rank = if op == TypedOp::MinMax { 2 } else { 1 };
        let identity = match op {
            TypedOp::Min => [T::HIGHEST, T::HIGHEST],
            TypedOp::Max => [T::LOWEST, T::LOWEST],
            _ => [T::HIGHEST, T::LOWEST],
        };
        let mut join = self.lock();
        for ((gpu, shard), j) in self.gpus.iter().zip(shards).zip(join.iter()) {
            // minmax writes (min, max) as two T; the gather takes the min from word SEND and
            // the max from word SEND + 1, so the pair is copied apart after the kernel.
            let mut send = view::<T>(&j.device, SEND, per_rank);
            if shard.is_empty() {
                gpu.bind()?;
                // SAFETY: a pageable source is staged before the call returns; the copy runs in
                // this rank's stream order, before the gather below.
                unsafe { send.async_copy_from(&identity[..per_rank], gpu.default_stream().stream()) }
                    .check("cuMemcpyHtoDAsync")?;
            } else {
                gpu.default_stream().reduce_into(op, shard, &mut send)?;
            }
        }
        let size = std::mem::size_of::<T>();
        let ranks = self.ranks();
        match op {
            TypedOp::MinMax => self.gather_pairs(&join, size)?,
            _ => self.gather(&join, &[(SEND, LO)], size)?,
        }
        for (gpu, j) in self.gpus.iter().zip(join.iter()) {
            let (lo, hi) = (view::<T>(&j.device, LO, ranks), view::<T>(&j.device, LO + ranks, ranks));
            // The folded pair as two adjacent T, as `read_all` reads it back.
            let pair = view::<T>(&j.device, RESULT, 2);
            match op {
                TypedOp::Min => gpu.default_stream().reduce_into(TypedOp::Min, &lo, &mut pair.index(..1))?,
                TypedOp::Max => gpu.default_stream().reduce_into(TypedOp::Max, &lo, &mut pair.index(..1))?,
                _ => {
                    gpu.default_stream().reduce_into(TypedOp::Min, &lo, &mut pair.index(..1))?;
                    gpu.default_stream().reduce_into(TypedOp::Max, &hi, &mut pair.index(1..))?;
                }
            }
        }
        let pairs = self.read_all::<[T; 2]>(&mut join, RESULT)?;
        Ok(pairs
            .into_iter()
            .map(|[a, b]| match op {
                TypedOp::MinMax => (a, b),
                _ => (a, a),
            })
            .collect())
    }

    /// All-gathers `bytes` from word `from` of every rank's join buffer into word `to` on, for
    /// each (from, to), in one group.
    fn gather(&self, join: &[Join], moves: &[(usize, usize)], bytes: usize) -> Result<()> {
        self.group(|r| {
            moves.iter().try_for_each(|&(from, to)| {
                let d = &join[r].device;
                // SAFETY: a slot holds 16 bytes ≥ `bytes`; each region one slot per rank.
                unsafe {
                    self.nccl.all_gather(
                        word(d, from),
                        word(d, to),
                        bytes,
                        DataType::U8,
                        self.comms[r],
                        self.raw_stream(r),
                    )
                }
            })
        })
    }

    /// Gathers the minima and the maxima of minmax partials: the kernel wrote (min, max) as two
    /// adjacent T in the send slot; a max narrower than a word is first moved to the next word,
    /// so that each gather reads from the start of a word.
    fn gather_pairs(&self, join: &[Join], size: usize) -> Result<()> {
        for (gpu, j) in self.gpus.iter().zip(join).filter(|_| size < 8) {
            let src = word(&j.device, SEND) + size as u64;
            let mut dst = view::<u8>(&j.device, SEND + 1, size);
            // SAFETY: both ranges lie in this rank's join buffer; stream-ordered after the kernel.
            let from = unsafe { DeviceSlice::from_raw_parts(DevicePointer::<u8>::from_raw(src), size) };
            gpu.bind()?;
            unsafe { dst.async_copy_from(&from, gpu.default_stream().stream()) }.check("cuMemcpyDtoDAsync")?;
        }
        self.gather(join, &[(SEND, LO), (SEND + 1, LO + self.ranks())], size)
    }

    /// Copies word `at` on (a `V` of at most two words) of every rank's join buffer to its
    /// pinned slot, all ranks in flight, then waits for each rank and reads its value.
    fn read_all<V: Copy>(&self, join: &mut [Join], at: usize) -> Result<Vec<V>> {
        let words = (std::mem::size_of::<V>() + 7) / 8;
        for (gpu, j) in self.gpus.iter().zip(join.iter_mut()) {
            gpu.bind()?;
            let src = view::<u64>(&j.device, at, words);
            // SAFETY: both live in `join` (locked); the copy is waited for below.
            unsafe { src.async_copy_to(&mut j.host[..words], gpu.default_stream().stream()) }
                .check("cuMemcpyDtoHAsync")?;
        }
        self.gpus
            .iter()
            .zip(join.iter())
            .map(|(gpu, j)| {
                gpu.bind()?;
                gpu.default_stream().synchronize()?;
                // SAFETY: the pinned slot holds `words` ≥ size_of::<V>() bytes, just copied.
                Ok(unsafe { std::ptr::read_volatile(j.host.as_ptr() as *const V) })
            })
            .collect()
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

/// The device address of 64-bit word `at` of `buffer`.
fn word(buffer: &DeviceBuffer<u64>, at: usize) -> u64 {
    debug_assert!(at <= buffer.len());
    buffer.as_device_ptr().as_raw() + 8 * at as u64
}

/// `len` elements of T in `buffer` from 64-bit word `at` on.
fn view<T: DeviceCopy>(buffer: &DeviceBuffer<u64>, at: usize, len: usize) -> DeviceSlice<T> {
    debug_assert!(8 * (buffer.len() - at) >= len * std::mem::size_of::<T>());
    // SAFETY: the join buffer holds the words the callers' layout names.
    unsafe { DeviceSlice::from_raw_parts_mut(DevicePointer::from_raw(word(buffer, at)), len) }
}
