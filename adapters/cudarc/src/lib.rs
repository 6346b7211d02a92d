//! [cudakernels]' reductions, arg reductions and gemv on cudarc's streams and
//! buffers.
//!
//! ```no_run
//! use cudakernels_cudarc::{cudakernels, Kernels, SgemvOptions};
//! use cudarc::driver::CudaContext;
//!
//! # fn main() -> Result<(), cudakernels_cudarc::Error> {
//! // The library first: `Error::NoDevice` without a GPU, before cudarc loads libcuda (its loader
//! // panics where it cannot).
//! let gpu = cudakernels::open()?;
//! let ctx = CudaContext::new(0)?; // device 0's primary context, where the library's kernels live
//! let kernels = Kernels::with_gpu(&ctx, gpu)?;
//! let stream = ctx.new_stream()?;
//! let x = stream.clone_htod(&[1.0f32, 2.0, 3.0, 4.0])?;
//! let sum = kernels.sum(&stream, &x)?; // after the copy, in stream order: no synchronization
//! let top = kernels.argmax(&stream, &x.slice(1..))?; // views too
//! let a = stream.clone_htod(&[0.5f32; 8])?;
//! let mut y = stream.alloc_zeros::<f32>(2)?;
//! kernels.sgemv(&stream, 2, 4, &a, &x, &mut y, SgemvOptions::default())?; // enqueued, not waited for
//! println!("{} {:?} {:?}", sum, top, stream.clone_dtoh(&y)?);
//! # Ok(())
//! # }
//! ```
//!
//! # Contexts and streams
//!
//! - The library runs in each device's primary context, the one `CudaContext::new` retains:
//!   [`Kernels::new`] and [`Kernels::with_gpu`] refuse another. Streams and buffers of another
//!   device or context are refused before anything is enqueued (`ForeignStream`, `WrongDevice`,
//!   `ForeignContext`), as is cudarc's per-thread default stream (one handle for a stream per
//!   thread, where one scratch cannot serve).
//! - Each cudarc stream gets one library stream that enqueues on it ([`cudakernels::Gpu::borrow_stream`]),
//!   made at the stream's first call and kept with a clone of its `Arc<CudaStream>`, so the
//!   stream is not destroyed while its scratch may be in use. [`Kernels::release`] drops one,
//!   and so does the first call on a new stream for entries only the cache still holds;
//!   dropping one (or the `Kernels`) waits for its stream.
//! - No context setup is needed on any thread: the library makes the context current for its
//!   part of a call, and cudarc binds it (and leaves it bound) for its waits and records.
//!
//! # Ordering: cudarc's read and write events
//!
//! Each call takes every input with [`DevicePtr::device_ptr`]`(stream)` and every output with
//! [`DevicePtrMut::device_ptr_mut`]`(stream)`, lets the library enqueue on `stream`, and only
//! then drops the guards those return. From cudarc's source (`driver/safe/core.rs`):
//! - `device_ptr` makes `stream` wait for the buffer's write event, `device_ptr_mut` for its read
//!   and write events: the library's kernels start after the buffer's last writer (and, for an
//!   output, its last reader), on whatever stream that ran.
//! - Dropping the guard (`SyncOnDrop::Record`) records the buffer's read event (inputs) or write
//!   event (outputs) on `stream`, now after the library's kernels. Later cudarc work waits for
//!   those events: a write to an input waits for the library's reads, a read of an output for
//!   its writes.
//! - Dropping a `CudaSlice` makes its own stream wait for both events before `cuMemFreeAsync`
//!   (or synchronizes that stream before `cuMemFree`), so memory is not freed under the
//!   library's kernels, even when the buffer is dropped as soon as the call returns.
//!
//! So every address the library gets names memory that stays allocated and unwritten by other
//! work until its kernels have run: what the library's raw entry points ask. cudarc waits and
//! records only while the context manages stream synchronization (a stream of `new_stream`
//! exists and event tracking is on). Otherwise every stream cudarc made is the legacy default
//! stream, ordered anyway, or the caller took the ordering on with cudarc's unsafe
//! `disable_event_tracking` or `wrap_borrowed_stream`, as their contracts say.
//!
//! cudarc keeps a failed wait or record in the context's error state. A call fails with a
//! pending error before taking any address (a pending error would make the waits be skipped),
//! with a failed wait before the library enqueues, and, where a record failed after it did,
//! synchronizes the stream before it returns that error.
//!
//! Value calls (`sum`, `min`, `argmax`, ...) return once the result has arrived, which may be
//! before the kernel has finished; the events cover the rest of its work.
//!
//! # Element types
//!
//! u8, i8, u16, i16, i32, u32, f32, f64 and half 2's `f16` and `bf16` (cudarc's, with its `f16`
//! feature), which stand for the library's half 1.8 types of the same bits ([`Element`]). Sums
//! accumulate as the library's do ([`Sum`]).
//!
//! # CUDA version
//!
//! cudarc takes its driver API version from one feature per build. The default feature
//! `cuda-12000` names the library's floor (CUDA 12.0 drivers); an application whose own cudarc
//! dependency names another version depends on this crate with `default-features = false`.
#![deny(unsafe_op_in_unsafe_fn)]
mod element;
mod error;
mod kernels;
mod ops;

pub use cudakernels;
pub use cudakernels::{
    ArgOp, Axis, AxisIndex, AxisShape, AxisStrategy, Op, ReduceStrategy, SgemvBatch, SgemvKernel, SgemvOptions,
    TypedOp, ValueIndex,
};
pub use element::{Element, Sum};
pub use error::{Error, Result};
pub use kernels::Kernels;

#[cfg(doc)]
use cudarc::driver::{DevicePtr, DevicePtrMut};
