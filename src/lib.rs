//! GPU reductions and sgemv written in Rust for CUDA (rust-cuda).
//!
//! ```no_run
//! let gpu = cudakernels::open()?; // leaves the device's context current on this thread
//! let x = cudakernels::cust::memory::DeviceBuffer::from_slice(&[1.0f32, 2.0, 3.0]).unwrap();
//! let sum = gpu.default_stream().reduce_sum(&x, cudakernels::ReduceStrategy::Auto)?;
//! # Ok::<(), cudakernels::Error>(())
//! ```
//!
//! A thread that shares the handle needs no setup when it copies through a stream: `upload`,
//! `alloc_zeroed` and `download` bind the device's context and work in the stream's order.
//!
//! ```no_run
//! let gpu = std::sync::Arc::new(cudakernels::open()?);
//! let worker = std::thread::spawn({
//!     let gpu = gpu.clone();
//!     move || -> cudakernels::Result<(u64, Vec<u8>)> {
//!         let s = gpu.new_stream()?;
//!         let x = s.upload(&[1u8, 2, 3])?;
//!         Ok((s.sum(&x)?, s.download(&x)?))
//!     }
//! });
//! assert_eq!(worker.join().unwrap()?, (6, vec![1, 2, 3]));
//! # Ok::<(), cudakernels::Error>(())
//! ```
pub use host::*;

mod images;

/// The README's Rust examples, compiled as doc-tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExamples;

#[cfg(feature = "from-source")]
pub use images::COMMITTED_IMAGES;
pub use images::{IMAGES, PTX};

/// Opens device 0 with the library's kernels loaded: the SASS cubin for its architecture where
/// there is one, else the PTX. `Error::NoDevice` where there is no device.
pub fn open() -> Result<Gpu> {
    open_with(0, ImageChoice::Auto)
}

/// Opens device `ordinal`, loading the image `choice` picks.
pub fn open_with(ordinal: u32, choice: ImageChoice) -> Result<Gpu> {
    Gpu::new(&IMAGES, ordinal, choice)
}

/// Opens every visible device and joins them with NCCL (loaded now): `Error::NoDevice`
/// without a GPU, `Error::NcclUnavailable` without NCCL. One GPU makes a one-rank MultiGpu.
pub fn open_all() -> Result<MultiGpu> {
    cust::init(cust::CudaFlags::empty()).map_err(|_| Error::NoDevice)?;
    let count = cust::device::Device::num_devices().map_err(Error::cuda("cuDeviceGetCount"))?;
    open_devices(&(0..count).collect::<Vec<_>>())
}

/// Opens devices `ordinals` (rank i on `ordinals[i]`) and joins them with NCCL.
pub fn open_devices(ordinals: &[u32]) -> Result<MultiGpu> {
    if ordinals.is_empty() {
        return Err(Error::NoDevice);
    }
    MultiGpu::new(ordinals.iter().map(|&o| open_with(o, ImageChoice::Auto)).collect::<Result<Vec<_>>>()?)
}
