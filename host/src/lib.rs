//! Safe host API for the library's kernels, on `cust`: reductions and sgemv on a [`Gpu`].
//!
//! Inputs are `&DeviceSlice<T>`, outputs `&mut DeviceSlice<T>`; every entry point returns a
//! [`Result`] with the one [`Error`] enum.
pub mod error;
pub mod gpu;
pub mod image;
pub mod ladder;
pub mod launch;
pub mod reduce;
pub mod sgemv;
pub mod typed;

pub use cust;
pub use error::{Error, Result};
pub use gpu::Gpu;
pub use image::{Cubin, ImageChoice, KernelImages, LoadedImage};
pub use kernels::config;
pub use ladder::{ladder_entry_point, Finish, LadderKernel, ReduceStrategy, SumElement};
pub use sgemv::{validate_sgemv, validate_sgemv_op, Op, SgemvKernel, SgemvOptions, SgemvPlan, SgemvShape};
pub use typed::{typed_entry_point, TypedElement, TypedOp};
