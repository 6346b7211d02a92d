//! The sharded reductions: each rank reduces its shard into its join scratch, then the ranks
//! join the partials (see the module doc).
use super::buffers::parts;
use super::join::{address, elements, Join, Word};
use super::ranks::MultiGpu;
use crate::error::{Check, Error, Result};
use crate::gpu::{Gpu, GpuStream};
use crate::ladder::{ReduceStrategy, SumElement};
use crate::launch::div_ceil;
use crate::nccl::{DataType, RedOp};
use crate::typed::{TypedElement, TypedOp};
use cust::memory::{AsyncCopyDestination, DeviceCopy, DeviceSlice};

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

/// Which region of a rank's join scratch holds the joined value.
type Region = fn(&Join) -> DeviceSlice<Word>;

impl MultiGpu {
    /// Sum over all shards (shard i on rank i; any may be empty), as each rank ends with it.
    pub fn sum<T: TypedElement>(&self, shards: &[&DeviceSlice<T>]) -> Result<Vec<T::Sum>>
    where
        T::Sum: JoinSum,
    {
        // SAFETY: each slice names its length of elements on its rank's device, which the
        // borrow keeps allocated while the call runs (it waits for its result).
        unsafe { self.sum_raw::<T>(&parts(shards)) }
    }

    /// [`MultiGpu::sum`] for the ladder's element types with `Auto`'s kernel on every rank.
    pub fn reduce_sum<T: SumElement + JoinSum>(&self, shards: &[&DeviceSlice<T>]) -> Result<Vec<T>> {
        // SAFETY: as for `sum`.
        unsafe { self.reduce_sum_raw::<T>(&parts(shards)) }
    }

    /// Minimum over all shards; `Error::Empty` when every shard is empty.
    pub fn min<T: TypedElement>(&self, shards: &[&DeviceSlice<T>]) -> Result<Vec<T>> {
        // SAFETY: as for `sum`.
        unsafe { self.min_raw::<T>(&parts(shards)) }
    }

    /// Maximum over all shards; `Error::Empty` when every shard is empty.
    pub fn max<T: TypedElement>(&self, shards: &[&DeviceSlice<T>]) -> Result<Vec<T>> {
        // SAFETY: as for `sum`.
        unsafe { self.max_raw::<T>(&parts(shards)) }
    }

    /// (min, max) over all shards; `Error::Empty` when every shard is empty.
    pub fn minmax<T: TypedElement>(&self, shards: &[&DeviceSlice<T>]) -> Result<Vec<(T, T)>> {
        // SAFETY: as for `sum`.
        unsafe { self.minmax_raw::<T>(&parts(shards)) }
    }

    /// Each rank enqueues its shard's sum into its send region (`partial`), then the ranks
    /// join: an all-reduce in place, or a gather and a fold into the result region.
    pub(super) fn join_sum<T: DeviceCopy, S: JoinSum>(
        &self,
        shards: &[&DeviceSlice<T>],
        partial: impl Fn(&GpuStream, &DeviceSlice<T>, &mut DeviceSlice<S>) -> Result<()>,
    ) -> Result<Vec<S>> {
        self.check_ranks(shards.len())?;
        self.collective(|join| {
            for ((gpu, shard), j) in self.gpus.iter().zip(shards).zip(join.iter()) {
                partial(gpu.default_stream(), shard, &mut elements::<S>(&j.send, 1))?;
            }
            let joined = self.join_partial_sums::<S>(join)?;
            Ok(self.read_all::<[S; 1]>(join, joined)?.into_iter().map(|[v]| v).collect())
        })
    }

    /// Enqueues joining the ranks' partial sums: an all-reduce in place, or a gather and a fold
    /// into the result region. Returns the region that then holds the sum.
    fn join_partial_sums<S: JoinSum>(&self, join: &[Join]) -> Result<Region> {
        let ranks = self.total_ranks();
        match S::ALL_REDUCE {
            Some(dtype) => {
                self.group(|r| {
                    let slot = address(&join[r].send);
                    // SAFETY: each rank's send region holds one S on its device, written by the
                    // kernel enqueued before it on this rank's stream; the scratch is locked.
                    unsafe { self.nccl.all_reduce(slot, slot, 1, dtype, RedOp::Sum, self.comms[r], self.raw_stream(r)) }
                })?;
                Ok(|j| j.send)
            }
            None => {
                self.gather(join, std::mem::size_of::<S>(), false)?;
                for (gpu, j) in self.gpus.iter().zip(join) {
                    S::fold_into(gpu, &elements(&j.lo, ranks), &mut elements(&j.result, 1))?;
                }
                Ok(|j| j.result)
            }
        }
    }

    /// Each rank enqueues its shard's min/max/minmax into its send region (the identities for an
    /// empty shard), the ranks all-gather the minima and the maxima, and each rank folds them.
    pub(super) fn join_extreme<T: TypedElement>(&self, op: TypedOp, shards: &[&DeviceSlice<T>]) -> Result<Vec<(T, T)>> {
        self.check_ranks(shards.len())?;
        if !self.spans_processes() && shards.iter().all(|s| s.is_empty()) {
            return Err(Error::Empty { op: op.name() });
        }
        let pairs = self.collective(|join| {
            // Across processes every rank learns whether all shards are empty, and all fail alike.
            if self.spans_processes() && self.total_len(join, shards)? == 0 {
                return Err(Error::Empty { op: op.name() });
            }
            self.extreme_partials(op, shards, join)?;
            let size = std::mem::size_of::<T>();
            match op {
                TypedOp::MinMax => self.gather_pairs(join, size)?,
                _ => self.gather(join, size, false)?,
            }
            self.fold_extremes::<T>(op, join)?;
            self.read_all::<[T; 2]>(join, |j| j.result)
        })?;
        Ok(pairs
            .into_iter()
            .map(|[a, b]| match op {
                TypedOp::MinMax => (a, b),
                _ => (a, a),
            })
            .collect())
    }

    /// Enqueues each rank's min, max or minmax of its shard into its send region; an empty
    /// shard's is the op's identity.
    fn extreme_partials<T: TypedElement>(&self, op: TypedOp, shards: &[&DeviceSlice<T>], join: &[Join]) -> Result<()> {
        let per_rank = if op == TypedOp::MinMax { 2 } else { 1 };
        let identity = match op {
            TypedOp::Min => [T::HIGHEST, T::HIGHEST],
            TypedOp::Max => [T::LOWEST, T::LOWEST],
            _ => [T::HIGHEST, T::LOWEST],
        };
        for ((gpu, shard), j) in self.gpus.iter().zip(shards).zip(join) {
            // minmax writes (min, max) as two adjacent T; `gather_pairs` gathers them apart.
            let mut send = elements::<T>(&j.send, per_rank);
            if shard.is_empty() {
                gpu.bind()?;
                // SAFETY: a pageable source is staged before the call returns; the copy runs in
                // this rank's stream order, before the gather.
                unsafe { send.async_copy_from(&identity[..per_rank], gpu.default_stream().library_stream()) }
                    .check("cuMemcpyHtoDAsync")?;
            } else {
                gpu.default_stream().reduce_into(op, shard, &mut send)?;
            }
        }
        Ok(())
    }

    /// Enqueues each rank's fold of the gathered minima and maxima into its result region, as
    /// two adjacent T (the second only for minmax), as `read_all` reads them back.
    fn fold_extremes<T: TypedElement>(&self, op: TypedOp, join: &[Join]) -> Result<()> {
        let ranks = self.total_ranks();
        for (gpu, j) in self.gpus.iter().zip(join) {
            let stream = gpu.default_stream();
            let (lo, hi) = (elements::<T>(&j.lo, ranks), elements::<T>(&j.hi, ranks));
            let pair = elements::<T>(&j.result, 2);
            match op {
                TypedOp::Min => stream.reduce_into(TypedOp::Min, &lo, &mut pair.index(..1))?,
                TypedOp::Max => stream.reduce_into(TypedOp::Max, &lo, &mut pair.index(..1))?,
                _ => {
                    stream.reduce_into(TypedOp::Min, &lo, &mut pair.index(..1))?;
                    stream.reduce_into(TypedOp::Max, &hi, &mut pair.index(1..))?;
                }
            }
        }
        Ok(())
    }

    /// All-gathers `bytes` of every rank's partial, in one group: from the first of
    /// [`Join::halves`] into `lo`, and with `pairs` also from the second into `hi`.
    pub(super) fn gather(&self, join: &[Join], bytes: usize, pairs: bool) -> Result<()> {
        self.group(|r| {
            let j = &join[r];
            let [first, second] = j.halves();
            let moves = [(first, j.lo), (second, j.hi)];
            moves[..1 + pairs as usize].iter().try_for_each(|(from, to)| {
                // SAFETY: `from` is a word ≥ `bytes` and `to` one word per rank on rank r's
                // device, in the locked join scratch; stream-ordered after the partials.
                unsafe {
                    self.nccl.all_gather(
                        address(from),
                        address(to),
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
    /// adjacent T in the send region; a max narrower than a word is first moved to the second
    /// word, so that each gather reads from the start of a word.
    fn gather_pairs(&self, join: &[Join], size: usize) -> Result<()> {
        for (gpu, j) in self.gpus.iter().zip(join).filter(|_| size < 8) {
            let written_max = elements::<u8>(&j.send, 2 * size).index(size..);
            let mut max_word = elements::<u8>(&j.halves()[1], size);
            gpu.bind()?;
            // SAFETY: both ranges lie in this rank's send region, apart (2 · size ≤ 8); the copy
            // runs in its stream order, after the kernel.
            unsafe { max_word.async_copy_from(&written_max, gpu.default_stream().library_stream()) }
                .check("cuMemcpyDtoDAsync")?;
        }
        self.gather(join, size, true)
    }

    /// The shards' total length over every rank of every process: an all-reduce of each rank's
    /// length, read back.
    fn total_len<T: DeviceCopy>(&self, join: &mut [Join], shards: &[&DeviceSlice<T>]) -> Result<Word> {
        for ((gpu, shard), j) in self.gpus.iter().zip(shards).zip(join.iter()) {
            let len = [shard.len() as Word];
            gpu.bind()?;
            // SAFETY: a pageable source is staged before the call returns; the copy runs in this
            // rank's stream order, before the all-reduce.
            unsafe { j.result.index(..1).async_copy_from(&len[..], gpu.default_stream().library_stream()) }
                .check("cuMemcpyHtoDAsync")?;
        }
        self.group(|r| {
            let slot = address(&join[r].result);
            // SAFETY: each rank's result region holds its length word, copied in before on its
            // stream; the scratch is locked.
            unsafe { self.nccl.all_reduce(slot, slot, 1, DataType::U64, RedOp::Sum, self.comms[r], self.raw_stream(r)) }
        })?;
        Ok(self.read_all::<[Word; 1]>(join, |j| j.result)?[0][0])
    }

    /// Copies the `joined` region (a `V` of at most two words) of every rank's join scratch to
    /// its pinned slot, all ranks in flight, then waits for the ranks (bounded: `wait_all`) and
    /// reads their values.
    fn read_all<V: Copy>(&self, join: &mut [Join], joined: Region) -> Result<Vec<V>> {
        let words = div_ceil(std::mem::size_of::<V>(), std::mem::size_of::<Word>());
        for (gpu, j) in self.gpus.iter().zip(join.iter_mut()) {
            gpu.bind()?;
            let src = joined(j).index(..words);
            // SAFETY: both live in `join` (locked); the copy is waited for below.
            unsafe { src.async_copy_to(&mut j.host[..words], gpu.default_stream().library_stream()) }
                .check("cuMemcpyDtoHAsync")?;
        }
        self.wait_all(join)?;
        // SAFETY: each pinned slot holds `words` ≥ size_of::<V>() bytes, copied in: every rank's
        // stream has passed its mark, recorded after the copy.
        Ok(join.iter().map(|j| unsafe { std::ptr::read_volatile(j.host.as_ptr() as *const V) }).collect())
    }
}
