//! The raw entry points: every entry point of [`GpuStream`](crate::GpuStream) and
//! [`MultiGpu`](crate::MultiGpu) that takes device buffers has an `unsafe` form named `…_raw`
//! that takes each buffer as a device address (`u64`, a `CUdeviceptr`) and a length in elements
//! (for `MultiGpu`, a [`RawBuffer`](crate::RawBuffer) per rank, on that rank's device), for memory the caller holds outside cust
//! (cudarc slices, a framework's tensors, `cudaMalloc`). The safe entry points are these with
//! the addresses and lengths of `DeviceSlice`s; both run the same checks and kernels.
//!
//! # Contract
//! For every buffer `(p, p_len)` of element type `T` a raw entry point takes, the caller
//! promises:
//! - `p` is the address of `p_len` consecutive `T`s (any address when `p_len` is 0) in memory
//!   the stream's device can access in its primary context: device memory of that device
//!   (`cuMemAlloc`, `cuMemAllocAsync`, `cudaMalloc`), managed memory, or page-locked host memory;
//! - that memory stays allocated until the work the call enqueues has run on the stream: after
//!   the call returns for a value call (it has waited), and for an enqueue-only call (`_into`,
//!   the axis reductions, the gemvs) until a wait on the stream or an event recorded on it
//!   after the call (a stream-ordered free on the same stream, `cuMemFreeAsync`, is ordered
//!   after it and so is safe);
//! - no other work writes a buffer the call reads, or reads or writes a buffer it writes, while
//!   the call's work runs, unless that work is ordered with the stream (on the same stream, or
//!   joined with events).
//!
//! What the library still checks, as for the safe forms, before anything is enqueued: lengths
//! against shapes (`LengthMismatch`), alignment for the element type (`Misaligned`), that each
//! address is memory the device reaches (`NotDeviceMemory`, `WrongDevice`, `ForeignContext`,
//! from one pointer query per buffer), and, for the gemvs and the axis reductions, that outputs
//! do not overlap inputs (`Overlap`). It cannot check that `p_len` elements really lie behind `p`: that is the promise above.
use cust::memory::{DeviceCopy, DevicePointer, DeviceSlice};

/// A view of `len` elements of `T` at device address `ptr`.
///
/// # Safety
/// The [contract](self) for `(ptr, len)`.
pub(crate) unsafe fn view<T: DeviceCopy>(ptr: u64, len: usize) -> DeviceSlice<T> {
    // SAFETY: the caller's promise.
    unsafe { DeviceSlice::from_raw_parts(DevicePointer::from_raw(ptr), len) }
}
