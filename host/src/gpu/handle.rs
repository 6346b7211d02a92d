//! [`Gpu`]: the handle of one device, its kernels loaded once, with its default stream.
use super::device::{device_methods, LoadedDevice};
use super::stream::GpuStream;
use crate::error::Result;
use crate::image::{ImageChoice, KernelImages};
use std::sync::Arc;

/// One CUDA device with the library's kernels loaded, `Send + Sync`: open it once per
/// device and share it (`Arc<Gpu>`). Entry points are methods of a [`GpuStream`]: the
/// handle's own ([`Gpu::default_stream`]) or further ones ([`Gpu::new_stream`]).
pub struct Gpu {
    default: GpuStream,
}

impl Gpu {
    /// Opens device `ordinal` and loads the image of `images` that `choice` picks for it
    /// ([`KernelImages::pick`]). `Error::NoDevice` where there is no device,
    /// `Error::UnsupportedDevice` below compute capability 8.0.
    pub fn new(images: &KernelImages, ordinal: u32, choice: ImageChoice) -> Result<Gpu> {
        let shared = Arc::new(LoadedDevice::open(images, ordinal, choice)?);
        Ok(Gpu { default: GpuStream::new(shared)? })
    }

    /// A new stream on this device with its own scratch, sharing the loaded kernels.
    pub fn new_stream(&self) -> Result<GpuStream> {
        GpuStream::new(self.default.shared.clone())
    }

    /// A [`GpuStream`] that enqueues on `stream`, a stream the caller made and keeps owning: every
    /// entry point then runs in that stream's order, after the caller's work queued on it before
    /// the call and before its work queued after, with no wait in between. The library never
    /// destroys the stream. The returned value holds the stream's scratch: keep it for as long
    /// as the stream is used (one per stream), and drop it before destroying the stream;
    /// dropping it waits for the stream. `Error::ForeignStream` unless `stream` belongs to this
    /// device's primary context (where the library's kernels live; cudarc and the CUDA runtime
    /// make their streams there). The legacy default stream (null) is accepted.
    ///
    /// # Safety
    /// `stream` is a live stream handle (made with `cuStreamCreate`, `cudaStreamCreate` or
    /// their variants, or null), and it stays alive until the returned `GpuStream` is dropped.
    pub unsafe fn borrow_stream(&self, stream: cust::sys::CUstream) -> Result<GpuStream> {
        // SAFETY: the caller's promise.
        unsafe { GpuStream::borrowed(self.default.shared.clone(), stream) }
    }

    /// The handle's default stream, made at open and dropped with the handle.
    pub fn default_stream(&self) -> &GpuStream {
        &self.default
    }

    device_methods!(default.shared);
}
