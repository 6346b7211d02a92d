//! What the multi-GPU calls take: each rank's buffers as cust slices ([`RowShard`]) or as raw
//! device addresses and lengths ([`RawBuffer`], [`RawRowShard`]), and the parts of the one as the
//! other.
use cust::memory::{DeviceCopy, DeviceSlice};

/// One GPU's part of a row-sharded sgemv: its `rows` rows of A (row-major, `opts.lda` or n
/// apart), a full-length `x` (rank 0's holds the input; [`MultiGpu::sgemv_rows`](super::MultiGpu::sgemv_rows) broadcasts it
/// into the others) and its rows of `y`.
pub struct RowShard<'a> {
    pub rows: usize,
    pub a: &'a DeviceSlice<f32>,
    pub x: &'a mut DeviceSlice<f32>,
    pub y: &'a mut DeviceSlice<f32>,
}

/// A buffer of the raw forms: its device address and its length in elements.
pub type RawBuffer = (u64, usize);

/// One GPU's part of [`MultiGpu::sgemv_rows_raw`](super::MultiGpu::sgemv_rows_raw), as [`RowShard`] holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawRowShard {
    pub rows: usize,
    pub a: RawBuffer,
    pub x: RawBuffer,
    pub y: RawBuffer,
}

/// The address and length of each slice.
pub(super) fn parts<T: DeviceCopy>(slices: &[&DeviceSlice<T>]) -> Vec<RawBuffer> {
    slices.iter().map(|s| (s.as_device_ptr().as_raw(), s.len())).collect()
}

/// [`parts`] of mutable slices.
pub(super) fn parts_mut<T: DeviceCopy>(slices: &[&mut DeviceSlice<T>]) -> Vec<RawBuffer> {
    slices.iter().map(|s| (s.as_device_ptr().as_raw(), s.len())).collect()
}

/// Each shard's parts.
pub(super) fn row_parts(shards: &[RowShard<'_>]) -> Vec<RawRowShard> {
    let part = |s: &DeviceSlice<f32>| (s.as_device_ptr().as_raw(), s.len());
    shards.iter().map(|s| RawRowShard { rows: s.rows, a: part(s.a), x: part(s.x), y: part(s.y) }).collect()
}
