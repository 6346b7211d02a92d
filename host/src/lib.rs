//! Safe host API for the library's kernels, on `cust`: reductions, arg reductions and sgemv on
//! a [`Gpu`].
//!
//! Inputs are `&DeviceSlice<T>`, outputs `&mut DeviceSlice<T>`; every entry point returns a
//! [`Result`] with the one [`Error`] enum. A [`Gpu`] is shared between threads; each
//! [`GpuStream`] has its own scratch (see [`gpu`] for streams and drop semantics).
//!
//! The reduction ladder (every step of the sum, for study and the benchmark) is in [`ladder`].
//! The `internals` feature (unstable, not covered by semver; the tests and the benchmark enable
//! it) also exports the planning internals: entry-point tables and names, grids, sgemv plans and
//! launch arithmetic.
#![deny(unsafe_op_in_unsafe_fn)]
pub mod arg;
pub mod axis;
mod entries;
pub mod error;
pub mod gpu;
pub mod image;
pub mod ladder;
#[cfg(feature = "internals")]
pub mod launch;
#[cfg(not(feature = "internals"))]
mod launch;
pub mod multi;
pub mod nccl;
pub mod raw;
pub mod reduce;
pub mod sgemv;
pub mod typed;

pub use arg::{ArgOp, ValueIndex};
pub use axis::arg::AxisIndex;
pub use axis::{Axis, AxisShape, AxisStrategy};
pub use cust;
pub use error::{Error, Result};
pub use gpu::{Gpu, GpuStream, LaunchOverlap};
pub use image::{Cubin, ImageChoice, KernelImages, LoadedImage};
pub use kernels::config;
pub use ladder::{ReduceStrategy, SumElement};
pub use multi::{MultiGpu, RawBuffer, RawRowShard, RowShard};
pub use nccl::NcclId;
pub use sgemv::{GemvVector, HalfWeight, Op, SgemvBatch, SgemvKernel, SgemvOptions};
pub use typed::{bf16, f16, TypedElement, TypedOp};

/// Planning internals for the tests and the benchmark (`internals` feature; unstable).
#[cfg(feature = "internals")]
mod internals {
    pub use crate::arg::arg_entry_point;
    pub use crate::axis::plan::{
        auto_strategy, column_width, column_word_tracks, first_block, first_grid, fold_grid, fold_plan, folded_columns,
        lanes_for, resolve, rows_aligned, short_rows, AxisFold, FoldPlan, AXIS_MAX_CHUNKS, AXIS_MAX_ROW_PIECES,
    };
    pub use crate::ladder::{
        ladder_entry_point, ladder_grid, Finish, LadderGrid, LadderKernel, LADDER_BLOCKS, LADDER_TYPES,
    };
    pub use crate::sgemv::dispatch::{sgemv_t_striped, stripe_depths};
    pub use crate::sgemv::half_gemv::{half_gemv_entry_point, sgemv_batched_entry_point};
    pub use crate::sgemv::layout::SgemvLayout;
    pub use crate::sgemv::plan::{Occupancy, SgemvExtra, SgemvPlan};
    pub use crate::sgemv::shape::{RawSlice, SgemvCall, SgemvShape};
    pub use crate::sgemv::work::SgemvWork;
    pub use crate::typed::typed_entry_point;
    pub use kernels::arg::{ARG_OPS, ARG_TYPES};
    pub use kernels::axis::{AXIS_KERNELS, AXIS_TYPES};
    pub use kernels::axis_arg::{AXIS_ARG_KERNELS, AXIS_ARG_OPS, AXIS_ARG_WORD_TYPES};
    pub use kernels::column_tiles::AXIS_TILE_TYPES;
    pub use kernels::fill::FILL_KERNELS;
    pub use kernels::sgemv::half_gemv::{GemvLoads, GEMV_KERNELS};
    pub use kernels::sgemv::SGEMV_KERNELS;
    pub use kernels::sgemv::{Loads, SgemvEntry, SgemvLaunch};
    pub use kernels::short_rows::{SHORT_ROW_TYPES, SHORT_ROW_VECTORS};
    pub use kernels::typed::{TYPED_OPS, TYPED_TYPES};
}
#[cfg(feature = "internals")]
pub use internals::*;
