//! GPU reductions and sgemv written in Rust for CUDA (rust-cuda).
//!
//! ```no_run
//! let gpu = cudakernels::open()?;
//! let x = cudakernels::cust::memory::DeviceBuffer::from_slice(&[1.0f32, 2.0, 3.0]).unwrap();
//! let sum = gpu.reduce_sum(&x, cudakernels::ReduceStrategy::Auto)?;
//! # Ok::<(), cudakernels::Error>(())
//! ```
pub use host::*;

pub mod timing;

/// The kernels, compiled to PTX by `build.rs` (compute_80; the driver JIT-compiles it).
pub const PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/kernels.ptx"));

/// Opens device 0 with the library's kernels loaded; `Error::NoDevice` where there is none.
pub fn open() -> Result<Gpu> {
    Gpu::new(PTX, 0)
}
