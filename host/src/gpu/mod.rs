//! The device handle and its streams.
//!
//! - [`Gpu`]: one device with the kernels loaded once, `Send + Sync`; share it (`Arc<Gpu>`)
//!   between threads. It answers the device's properties and owns a default stream,
//!   [`Gpu::default_stream`].
//! - [`GpuStream`]: a stream of the library with its own scratch (per-block partials, ticket
//!   counter, flagged slots, a device result slot and a pinned host slot). Every entry point
//!   is a method of it. Two streams never share scratch, so work on them overlaps freely;
//!   calls on one stream from several threads are serialized by the stream's scratch lock.
//!
//! Drop semantics:
//! - Dropping a [`GpuStream`] (or the [`Gpu`], which drops its default stream) first waits for
//!   the stream's queued work, then frees its scratch, then destroys the stream. The loaded
//!   module lives until its last stream and the [`Gpu`] are dropped.
//! - Entry points borrow their inputs and outputs only while they enqueue. A cust
//!   `DeviceBuffer` dropped while a queued kernel still uses it is freed with `cuMemFree`, a
//!   synchronizing call: it waits for the device's work in flight before the memory goes
//!   (tests/gpu_streams drops inputs under queued sgemvs). That wait is device-wide: drop
//!   buffers after a `synchronize` to avoid stalling other streams.
//!
//! Files: `device` (context, module, entry table, properties), `scratch` (a stream's
//! buffers), `stream` ([`GpuStream`], its lock and value slot), `handle` ([`Gpu`]), `launch`
//! (typed kernel arguments and the launch).
mod device;
mod handle;
mod launch;
mod scratch;
mod stream;

pub use handle::Gpu;
pub(crate) use launch::KernelArgs;
pub use stream::GpuStream;
pub(crate) use stream::{Enqueue, ResultSlot};
