//! The GPU side of the library: `no_std` kernels that `build.rs` compiles to PTX with
//! rustc_codegen_nvvm, and the constants the host shares with them ([`config`]).
//!
//! Layering follows CUB: lane exchange ([`shuffle`]) under the operators ([`ops`]), per-thread
//! loads and folds ([`thread`]), warp reductions ([`warp`]),
//! block reductions ([`block`]), then the device-wide kernels ([`reduce`], [`typed`], [`sgemv`]).
#![cfg_attr(
    target_os = "cuda",
    no_std,
    feature(register_attr, asm, asm_experimental_arch),
    register_attr(nvvm_internal)
)]
// Kernels take `&[T]` for inputs, as rust-cuda's examples do; the host passes (pointer, length).
#![allow(improper_ctypes_definitions, clippy::missing_safety_doc)]

pub mod config;

#[cfg(target_os = "cuda")]
pub mod block;
#[cfg(target_os = "cuda")]
pub mod ops;
#[cfg(target_os = "cuda")]
pub mod packed;
pub mod reduce;
pub mod sgemv;
#[cfg(target_os = "cuda")]
mod shared;
#[cfg(target_os = "cuda")]
pub mod shuffle;
#[cfg(target_os = "cuda")]
pub mod thread;
pub mod typed;
#[cfg(target_os = "cuda")]
pub mod warp;
