//! Safe host API for the library's kernels, on `cust`: reductions, arg reductions and sgemv on
//! a [`Gpu`].
//!
//! Inputs are `&DeviceSlice<T>`, outputs `&mut DeviceSlice<T>`; every entry point returns a
//! [`Result`] with the one [`Error`] enum. A [`Gpu`] is shared between threads; each
//! [`GpuStream`] has its own scratch (see [`gpu`] for streams and drop semantics).
#![deny(unsafe_op_in_unsafe_fn)]
pub mod arg;
pub mod axis;
mod entries;
pub mod error;
pub mod gpu;
pub mod image;
pub mod ladder;
pub mod launch;
pub mod multi;
pub mod nccl;
pub mod reduce;
pub mod sgemv;
pub mod typed;

pub use arg::{arg_entry_point, ArgOp, ValueIndex};
pub use axis::arg::AxisIndex;
pub use axis::{Axis, AxisShape, AxisStrategy};
pub use cust;
pub use error::{Error, Result};
pub use gpu::{Gpu, GpuStream};
pub use image::{Cubin, ImageChoice, KernelImages, LoadedImage};
pub use kernels::arg::{ARG_OPS, ARG_TYPES};
pub use kernels::axis::{AXIS_KERNELS, AXIS_TYPES};
pub use kernels::axis_arg::AXIS_ARG_OPS;
pub use kernels::config;
pub use kernels::reduce::{LadderGrid, LADDER_BLOCKS, LADDER_TYPES};
pub use kernels::sgemv::half_gemv::HALF_GEMV_KERNELS;
pub use kernels::sgemv::SGEMV_KERNELS;
pub use kernels::typed::{TYPED_OPS, TYPED_TYPES};
pub use ladder::{ladder_entry_point, ladder_grid, Finish, LadderKernel, ReduceStrategy, SumElement};
pub use multi::{MultiGpu, RowShard};
pub use sgemv::{
    GemvVector, HalfWeight, Occupancy, Op, RawSlice, SgemvBatch, SgemvCall, SgemvExtra, SgemvKernel, SgemvLaunch,
    SgemvLayout, SgemvOptions, SgemvPlan, SgemvShape,
};
pub use typed::{bf16, f16, typed_entry_point, TypedElement, TypedOp};
