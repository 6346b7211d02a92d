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

    /// The handle's default stream, made at open and dropped with the handle.
    pub fn default_stream(&self) -> &GpuStream {
        &self.default
    }

    device_methods!(default.shared);
}
