//! The device handle and its streams.
//!
//! - [`Gpu`]: one device with the kernels loaded once, `Send + Sync`; share it (`Arc<Gpu>`)
//!   between threads. It answers the device's properties and owns a default stream,
//!   [`Gpu::default_stream`].
//! - [`GpuStream`]: a stream with the library's scratch for it (per-block partials, ticket
//!   counter, flagged slots, a device result slot and a pinned host slot). Every entry point
//!   is a method of it, and so are `upload`, `alloc_zeroed` and `download`, which work in its
//!   order from any thread. Streams are blocking streams: two of them never wait for each
//!   other (nor share scratch), and each waits for the legacy default stream, where cust's
//!   synchronous copies run. Calls on one stream from several threads are serialized by the
//!   stream's scratch lock.
//! - Where the device loaded the sm_90 cubin, a stream's kernels are launched while the kernel
//!   ahead of them finishes (programmatic dependent launch, [`LaunchOverlap`]); each waits for
//!   that kernel before it touches memory, so results and stream order are unchanged.
//!
//! Contexts:
//! - Each device's primary context is retained once per process and never released, so it
//!   outlives every buffer made in it (one that outlived a released context would free, once
//!   the device is opened again, whatever new allocation got its address).
//! - Entry points, `download` and `synchronize` make the device's context current for the call
//!   and give the caller's (or none) back. `open`, `new_stream`, `upload`, `alloc_zeroed`,
//!   `bind` and the drops below leave it current on the calling thread.
//! - Every buffer a caller lends to a launch is checked first: aligned for its elements, device
//!   memory of the stream's device and primary context (`Error::Misaligned`,
//!   `Error::NotDeviceMemory`, `Error::WrongDevice`, `Error::ForeignContext`); then nothing is
//!   launched.
//!
//! Drop semantics:
//! - Dropping a [`GpuStream`] (or the [`Gpu`], which drops its default stream) makes its
//!   device's context current, waits for the stream's queued work, then frees its scratch, then
//!   destroys the stream. The loaded module lives until its last stream and the [`Gpu`] are
//!   dropped.
//! - Entry points borrow their inputs and outputs only while they enqueue. A cust
//!   `DeviceBuffer` dropped while a queued kernel still uses it is freed with `cuMemFree`, a
//!   synchronizing call: it waits for the device's work in flight before the memory goes
//!   (tests/gpu_streams drops inputs under queued sgemvs). That wait is device-wide: drop
//!   buffers after a `synchronize` to avoid stalling other streams.
//!
//! Files: `context` (retained primary contexts, the call's hold on one), `device` (module,
//! entry table, properties), `scratch` (a stream's buffers), `stream` ([`GpuStream`], its lock
//! and value slot), `handle` ([`Gpu`]), `lent` (checks of the buffers a caller lends),
//! `launch` (typed kernel arguments and the launch), `dependent_launch` (launches that overlap
//! the kernel ahead of them), `transfer` (allocation and copies on a stream).
mod context;
mod dependent_launch;
mod device;
mod handle;
mod launch;
mod lent;
mod queue;
mod scratch;
mod stream;
mod transfer;

pub use dependent_launch::LaunchOverlap;
pub use handle::Gpu;
pub(crate) use launch::KernelArgs;
pub(crate) use lent::{byte_span, check_overlap};
pub use stream::GpuStream;
pub(crate) use stream::{Enqueue, ResultSlot};
