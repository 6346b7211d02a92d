//! The GPU side of the library: `no_std` kernels that `build.rs` compiles to PTX with
//! rustc_codegen_nvvm, and what the host shares with them: the constants ([`config`]) and the
//! arg reductions' order ([`arg_order`]), by which the host folds a small value call's blocks.
//!
//! Layering follows CUB: lane exchange ([`shuffle`]) under the operators ([`ops`]; the 16-bit
//! floats' in [`halves`], the min/max folds in [`packed`]), per-thread loads and folds
//! ([`thread`]; the column arg tracks of halves in [`column_tracks`]), warp reductions
//! ([`warp`]), the host's tagged result words ([`publish`]), block reductions ([`block`]), then
//! the device-wide kernels ([`reduce`], [`typed`], [`arg`], [`axis`], [`axis_arg`],
//! [`column_tiles`], [`short_rows`], [`sgemv`]),
//! and the zero [`fill`] the host clears outputs with.
#![cfg_attr(
    target_os = "cuda",
    no_std,
    feature(register_attr, asm, asm_experimental_arch),
    register_attr(nvvm_internal)
)]
// Kernels take `&[T]` for inputs, as rust-cuda's examples do; the host passes (pointer, length).
#![allow(improper_ctypes_definitions, clippy::missing_safety_doc)]

/// Declares modules of GPU code only (kernel bodies and the layers beneath them); the host
/// build of this crate has the tables and constants alone.
macro_rules! gpu_modules {
    ($vis:vis $($m:ident),* $(,)?) => { $( #[cfg(target_os = "cuda")] $vis mod $m; )* };
}

pub mod arg;
pub mod arg_order;
pub mod axis;
pub mod axis_arg;
pub mod column_tiles;
pub mod short_rows;
#[macro_use]
pub mod config;
pub mod fill;
pub mod reduce;
pub mod sgemv;
pub mod typed;

/// The committed images, embedded by the host build.
#[cfg(not(target_os = "cuda"))]
pub mod images;

gpu_modules!(pub block, column_tracks, grid_dependency, halves, ops, packed, piece_fold, publish, shuffle, thread, warp);
gpu_modules!(shared);
