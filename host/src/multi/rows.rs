//! Row-sharded sgemv, and the broadcasts that feed x and gather y.
use super::buffers::{parts_mut, row_parts, RowShard};
use super::join::{Join, Word};
use super::ranks::MultiGpu;
use crate::error::{Check, Error, Result};
use crate::nccl::DataType;
use crate::sgemv::{Op, RawSlice, SgemvCall, SgemvOptions};
use cust::memory::{AsyncCopyDestination, DeviceCopy, DeviceSlice};

impl MultiGpu {
    /// Enqueues a row-sharded `y = alpha·A·x + beta·y` (`Op::N`): x is broadcast from rank 0
    /// into every rank's `x`, then each rank computes its rows. Row counts may differ (and be
    /// 0). Every shard is validated before anything is enqueued. Does not wait; see
    /// [`MultiGpu::gather_rows`] to give every rank the whole y.
    pub fn sgemv_rows(&self, n: usize, shards: &mut [RowShard<'_>], opts: SgemvOptions) -> Result<()> {
        // SAFETY: each slice names its length of elements on its rank's device, which the borrow
        // keeps allocated while the call enqueues (a later free waits for the queued work).
        unsafe { self.sgemv_rows_raw(n, &row_parts(shards), opts) }
    }

    /// The body of [`MultiGpu::sgemv_rows`] and its raw form.
    pub(super) fn sgemv_rows_of(&self, n: usize, shards: &mut [RowShard<'_>], opts: SgemvOptions) -> Result<()> {
        self.check_ranks(shards.len())?;
        if opts.op != Op::N {
            return Err(Error::Unsupported { what: "row-sharded sgemv of Op::T (shard the columns instead)".into() });
        }
        let lda = opts.lda.unwrap_or(n);
        for s in shards.iter() {
            let (a, x, y) = (RawSlice::of(s.a), RawSlice::of(s.x), RawSlice::of(s.y));
            SgemvCall { op: Op::N, m: s.rows, n, lda, a, x, y }.validate()?;
        }
        let xs: Vec<u64> = shards.iter().map(|s| s.x.as_device_ptr().as_raw()).collect();
        self.collective(|_| {
            // SAFETY: every rank's x holds n floats on its device (validated above).
            unsafe { self.broadcast_bytes(0, &xs, 4 * n)? };
            // In rank order: launching the waiting ranks first was slower (docs/tuning-log.md).
            for (gpu, s) in self.gpus.iter().zip(shards.iter_mut()) {
                gpu.default_stream().sgemv(s.rows, n, s.a, s.x, s.y, opts)?;
            }
            Ok(())
        })
    }

    /// Enqueues copying rank `root`'s `bufs[root]` into every other rank's buffer (one NCCL
    /// broadcast; all of `bufs`, one per rank, must have the same length).
    pub fn broadcast<T: DeviceCopy>(&self, root: usize, bufs: &mut [&mut DeviceSlice<T>]) -> Result<()> {
        // SAFETY: as for `sgemv_rows`.
        unsafe { self.broadcast_raw::<T>(root, &parts_mut(bufs)) }
    }

    /// The body of [`MultiGpu::broadcast`] and its raw form.
    pub(super) fn broadcast_of<T: DeviceCopy>(&self, root: usize, bufs: &mut [&mut DeviceSlice<T>]) -> Result<()> {
        self.check_ranks(bufs.len())?;
        if root >= self.total_ranks() {
            return Err(Error::Unsupported { what: format!("root rank {} of {}", root, self.total_ranks()) });
        }
        let len = bufs[self.local(root).unwrap_or(0)].len();
        if let Some(b) = bufs.iter().find(|b| b.len() != len) {
            return Err(Error::LengthMismatch { what: "broadcast buffer", expected: len, actual: b.len() });
        }
        let ptrs: Vec<u64> = bufs.iter().map(|b| b.as_device_ptr().as_raw()).collect();
        // SAFETY: every buffer holds `len` elements on its rank's device (checked above).
        self.collective(|_| unsafe { self.broadcast_bytes(root, &ptrs, len * std::mem::size_of::<T>()) })
    }

    /// One NCCL broadcast of `bytes` from `ptrs[root]` into every rank's `ptrs[r]`, in place.
    ///
    /// # Safety
    /// `ptrs[r]` holds `bytes` bytes on rank r's device; the caller runs inside `collective`.
    unsafe fn broadcast_bytes(&self, root: usize, ptrs: &[u64], bytes: usize) -> Result<()> {
        self.group(|r| {
            let p = ptrs[r];
            // SAFETY: `p` holds `bytes` bytes on rank r's device (this function's contract).
            unsafe { self.nccl.broadcast(p, p, bytes, DataType::U8, root as i32, self.comms[r], self.raw_stream(r)) }
        })
    }

    /// Enqueues copying every rank's rows of y (`shards[i].y`, in rank order) into each rank's
    /// `full` y, whose length must be the sum of the row counts. Across processes, the ranks
    /// first exchange their row counts (one all-gather, waited for); a process whose `full` is
    /// then the wrong length returns `Error::LengthMismatch`, and its peers' next wait
    /// `Error::RankFailed` once the wait limit passes.
    pub fn gather_rows(&self, shards: &[RowShard<'_>], full: &mut [&mut DeviceSlice<f32>]) -> Result<()> {
        // SAFETY: as for `sgemv_rows`.
        unsafe { self.gather_rows_raw(&row_parts(shards), &parts_mut(full)) }
    }

    /// The body of [`MultiGpu::gather_rows`] and its raw form.
    pub(super) fn gather_rows_of(&self, shards: &[RowShard<'_>], full: &mut [&mut DeviceSlice<f32>]) -> Result<()> {
        self.check_ranks(shards.len())?;
        self.check_ranks(full.len())?;
        if let Some(s) = shards.iter().find(|s| s.y.len() != s.rows) {
            return Err(Error::LengthMismatch { what: "y", expected: s.rows, actual: s.y.len() });
        }
        if !self.spans_processes() {
            let rows: Vec<usize> = shards.iter().map(|s| s.rows).collect();
            check_full(&rows, full)?;
            return self.collective(|_| self.broadcast_rows(&rows, shards, full));
        }
        self.collective(|join| {
            let rows = self.all_rows(join, shards)?;
            check_full(&rows, full)?;
            self.broadcast_rows(&rows, shards, full)
        })
    }

    /// Every rank's row count in rank order, all-gathered from every process and read back.
    fn all_rows(&self, join: &mut [Join], shards: &[RowShard<'_>]) -> Result<Vec<usize>> {
        for ((gpu, s), j) in self.gpus.iter().zip(shards).zip(join.iter()) {
            let rows = [s.rows as Word];
            gpu.bind()?;
            // SAFETY: a pageable source is staged before the call returns; the copy runs in this
            // rank's stream order, before the gather.
            unsafe { j.send.index(..1).async_copy_from(&rows[..], gpu.default_stream().library_stream()) }
                .check("cuMemcpyHtoDAsync")?;
        }
        self.gather(join, std::mem::size_of::<Word>(), false)?;
        let total = self.total_ranks();
        let (gpu, first) = (&self.gpus[0], &mut join[0]);
        gpu.bind()?;
        // SAFETY: both live in the locked join scratch (`host` holds a word per rank); the copy
        // is waited for below.
        unsafe {
            first.lo.index(..total).async_copy_to(&mut first.host[..total], gpu.default_stream().library_stream())
        }
        .check("cuMemcpyDtoHAsync")?;
        self.wait_all(join)?;
        // SAFETY: the pinned slot holds `total` words, copied in: the stream has passed its mark,
        // recorded after the copy.
        Ok((0..total).map(|i| unsafe { std::ptr::read_volatile(join[0].host.as_ptr().add(i)) } as usize).collect())
    }

    /// Enqueues one NCCL broadcast per rank with rows (`rows[root]`, every rank's in rank order):
    /// its rows of y into every rank's `full` at their offset. The caller has checked the
    /// lengths and runs inside `collective`.
    fn broadcast_rows(&self, rows: &[usize], shards: &[RowShard<'_>], full: &[&mut DeviceSlice<f32>]) -> Result<()> {
        let mut offset = 0;
        for (root, &count) in rows.iter().enumerate() {
            if count > 0 {
                // Only the root's send buffer is read; a process without the root passes its own.
                let root_y = self.local(root).map(|i| shards[i].y.as_device_ptr().as_raw());
                self.group(|r| {
                    let recv = full[r].index(offset..offset + count).as_device_ptr().as_raw();
                    let send = root_y.unwrap_or(recv);
                    // SAFETY: `send` holds `count` floats on the root's device, each `recv` as
                    // many on its own (lengths checked by `gather_rows`).
                    unsafe {
                        self.nccl.broadcast(
                            send,
                            recv,
                            4 * count,
                            DataType::U8,
                            root as i32,
                            self.comms[r],
                            self.raw_stream(r),
                        )
                    }
                })?;
            }
            offset += count;
        }
        Ok(())
    }
}

/// `Error::LengthMismatch` where a `full` y is not the sum of the row counts long.
fn check_full(rows: &[usize], full: &[&mut DeviceSlice<f32>]) -> Result<()> {
    let m: usize = rows.iter().sum();
    match full.iter().find(|f| f.len() != m) {
        Some(f) => Err(Error::LengthMismatch { what: "full y", expected: m, actual: f.len() }),
        None => Ok(()),
    }
}
