//! The raw forms of the multi-GPU calls: each rank's buffer as a device address and a length in
//! elements (`(address, len)`, on that rank's device), under the [raw contract](crate::raw).
//! The safe forms call these with their slices' parts.
use super::buffers::{RawBuffer, RawRowShard, RowShard};
use super::ranks::MultiGpu;
use super::reduce::JoinSum;
use crate::error::Result;
use crate::ladder::{ReduceStrategy, SumElement};
use crate::raw::view;
use crate::sgemv::SgemvOptions;
use crate::typed::{TypedElement, TypedOp};
use cust::memory::{DeviceCopy, DeviceSlice};

/// A view of each buffer.
///
/// # Safety
/// The raw contract for every buffer.
unsafe fn views<T: DeviceCopy>(buffers: &[RawBuffer]) -> Vec<DeviceSlice<T>> {
    // SAFETY: the caller's promise for each buffer.
    buffers.iter().map(|&(p, len)| unsafe { view::<T>(p, len) }).collect()
}

impl MultiGpu {
    /// [`MultiGpu::sum`] on raw buffers (shard i on rank i's device).
    ///
    /// # Safety
    /// The [raw contract](crate::raw) for every shard.
    pub unsafe fn sum_raw<T: TypedElement>(&self, shards: &[RawBuffer]) -> Result<Vec<T::Sum>>
    where
        T::Sum: JoinSum,
    {
        // SAFETY: the caller's promise.
        let views = unsafe { views::<T>(shards) };
        self.join_sum(&views.iter().collect::<Vec<_>>(), |stream, shard, out| stream.sum_into(shard, out))
    }

    /// [`MultiGpu::reduce_sum`] on raw buffers.
    ///
    /// # Safety
    /// The [raw contract](crate::raw) for every shard.
    pub unsafe fn reduce_sum_raw<T: SumElement + JoinSum>(&self, shards: &[RawBuffer]) -> Result<Vec<T>> {
        // SAFETY: the caller's promise.
        let views = unsafe { views::<T>(shards) };
        let shards: Vec<_> = views.iter().collect();
        self.join_sum(&shards, |stream, shard, out| {
            stream.reduce_sum_into(shard, out, ReduceStrategy::Auto).map(|_| ())
        })
    }

    /// [`MultiGpu::min`] on raw buffers.
    ///
    /// # Safety
    /// The [raw contract](crate::raw) for every shard.
    pub unsafe fn min_raw<T: TypedElement>(&self, shards: &[RawBuffer]) -> Result<Vec<T>> {
        // SAFETY: the caller's promise.
        let views = unsafe { views::<T>(shards) };
        Ok(self.join_extreme(TypedOp::Min, &views.iter().collect::<Vec<_>>())?.into_iter().map(|(v, _)| v).collect())
    }

    /// [`MultiGpu::max`] on raw buffers.
    ///
    /// # Safety
    /// The [raw contract](crate::raw) for every shard.
    pub unsafe fn max_raw<T: TypedElement>(&self, shards: &[RawBuffer]) -> Result<Vec<T>> {
        // SAFETY: the caller's promise.
        let views = unsafe { views::<T>(shards) };
        Ok(self.join_extreme(TypedOp::Max, &views.iter().collect::<Vec<_>>())?.into_iter().map(|(v, _)| v).collect())
    }

    /// [`MultiGpu::minmax`] on raw buffers.
    ///
    /// # Safety
    /// The [raw contract](crate::raw) for every shard.
    pub unsafe fn minmax_raw<T: TypedElement>(&self, shards: &[RawBuffer]) -> Result<Vec<(T, T)>> {
        // SAFETY: the caller's promise.
        let views = unsafe { views::<T>(shards) };
        self.join_extreme(TypedOp::MinMax, &views.iter().collect::<Vec<_>>())
    }

    /// [`MultiGpu::broadcast`] on raw buffers.
    ///
    /// # Safety
    /// The [raw contract](crate::raw) for every buffer.
    pub unsafe fn broadcast_raw<T: DeviceCopy>(&self, root: usize, bufs: &[RawBuffer]) -> Result<()> {
        // SAFETY: the caller's promise.
        let mut views = unsafe { views::<T>(bufs) };
        self.broadcast_of(root, &mut views.iter_mut().collect::<Vec<_>>())
    }

    /// [`MultiGpu::sgemv_rows`] on raw buffers.
    ///
    /// # Safety
    /// The [raw contract](crate::raw) for every buffer of every shard.
    pub unsafe fn sgemv_rows_raw(&self, n: usize, shards: &[RawRowShard], opts: SgemvOptions) -> Result<()> {
        // SAFETY: the caller's promise.
        let mut views = unsafe { row_views(shards) };
        self.sgemv_rows_of(n, &mut row_shards(&mut views), opts)
    }

    /// [`MultiGpu::gather_rows`] on raw buffers.
    ///
    /// # Safety
    /// The [raw contract](crate::raw) for every buffer.
    pub unsafe fn gather_rows_raw(&self, shards: &[RawRowShard], full: &[RawBuffer]) -> Result<()> {
        // SAFETY: the caller's promise.
        let (mut views, mut full) = unsafe { (row_views(shards), views::<f32>(full)) };
        self.gather_rows_of(&row_shards(&mut views), &mut full.iter_mut().collect::<Vec<_>>())
    }
}

/// Each shard's row count and views of its A, x and y.
type RowViews = Vec<(usize, DeviceSlice<f32>, DeviceSlice<f32>, DeviceSlice<f32>)>;

/// # Safety
/// The raw contract for every buffer of every shard.
unsafe fn row_views(shards: &[RawRowShard]) -> RowViews {
    // SAFETY: the caller's promise for each buffer.
    shards.iter().map(|s| unsafe { (s.rows, view(s.a.0, s.a.1), view(s.x.0, s.x.1), view(s.y.0, s.y.1)) }).collect()
}

fn row_shards(views: &mut RowViews) -> Vec<RowShard<'_>> {
    views.iter_mut().map(|(rows, a, x, y)| RowShard { rows: *rows, a, x, y }).collect()
}
