//! Allocation and copies in a stream's order, from any thread: each binds the device's context
//! first, so a fresh thread that shares an `Arc<Gpu>` needs no `bind` of its own.
use super::stream::GpuStream;
use crate::error::{alloc, Result};
use cust::memory::{DeviceBuffer, DeviceCopy, DeviceSlice};
use std::ffi::c_void;

impl GpuStream {
    /// `len` zeroed elements of device memory on this stream's device. Binds the device's
    /// context (leaves it current, as [`GpuStream::bind`] does: the buffer's own cust calls and
    /// its free then find it), zeroes on this stream and waits for this stream, so the zeros
    /// are there for any stream or copy that reads the buffer next.
    pub fn alloc_zeroed<T: DeviceCopy + bytemuck::Zeroable>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        self.bind()?;
        let buffer = alloc::<T>(len)?;
        let bytes = len * std::mem::size_of::<T>();
        if bytes > 0 {
            // SAFETY: the whole of `buffer`, a live allocation, which outlives the memset: the
            // wait below returns only once it has run.
            unsafe { self.stream.memset_zero(buffer.as_device_ptr().as_raw(), bytes)? };
        }
        self.synchronize()?;
        Ok(buffer)
    }

    /// `host` copied to new device memory on this stream's device. Binds the device's context
    /// (leaves it current, as [`GpuStream::bind`] does), copies on this stream and waits for
    /// this stream before it returns.
    ///
    /// The wait is what makes this correct for any `host`: an asynchronous copy from pageable
    /// memory may return once the data is staged, before its DMA lands, and one from
    /// page-locked memory (a `LockedBuffer`'s slice) returns at once and reads `host` later,
    /// after this borrow has ended. Waiting, the buffer holds `host` for every reader.
    pub fn upload<T: DeviceCopy>(&self, host: &[T]) -> Result<DeviceBuffer<T>> {
        self.bind()?;
        let buffer = alloc::<T>(host.len())?;
        if !host.is_empty() {
            let bytes = std::mem::size_of_val(host);
            // SAFETY: `host` and `buffer` have the same length and both outlive the copy: the
            // wait below returns only once it has run.
            unsafe {
                self.stream.copy_from_host(buffer.as_device_ptr().as_raw(), host.as_ptr() as *const c_void, bytes)?
            };
        }
        self.synchronize()?;
        Ok(buffer)
    }

    /// `device` copied to the host in this stream's order: after the work queued on this
    /// stream, which the call waits for (and whose faults it reports). The calling thread's
    /// current context is as it was before.
    pub fn download<T: DeviceCopy + Default + Clone>(&self, device: &DeviceSlice<T>) -> Result<Vec<T>> {
        let _entered = self.shared.enter()?;
        let mut host = vec![T::default(); device.len()];
        if !host.is_empty() {
            let (src, bytes) = (device.as_device_ptr().as_raw(), std::mem::size_of_val(&host[..]));
            // SAFETY: `host` and `device` have the same length and both outlive the copy: the
            // wait below returns only once it has run (into pageable memory it may already
            // have, but the wait does not rest on that).
            unsafe { self.stream.copy_to_host(host.as_mut_ptr() as *mut c_void, src, bytes)? };
        }
        self.synchronize()?;
        Ok(host)
    }
}
