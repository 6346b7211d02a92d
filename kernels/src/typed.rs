//! Typed reductions: sum, min, max and minmax over u8…f64, f16 and bf16, one generic body (vector
//! loads, shuffles, last-block finish) instantiated per type and op: `{op}_{type}`.
//!
//! Sums accumulate wider: u8/u16/u32 → u64, i8/i16/i32 → i64, f32 → f32 (or f64 in
//! `sum_f32_f64acc`), f64 → f64, f16/bf16 → f32. Float min/max propagate NaN (see [`crate::ops`]).
//!
//! Every entry point takes `(input, partials, counter, out, tagged, seq)`.
//!
//! # Safety
//! Launch with any block of whole warps up to `MAX_BLOCK` threads and any grid; `partials`
//! holds `gridDim.x` accumulators, `counter` is a u32 that is 0 before the launch (the kernel
//! leaves it 0); `tagged` is null and `out` holds one accumulator, or `tagged` holds the 8-byte
//! aligned, device-addressable words of a value call, which take the result instead, tagged
//! with `seq` ([`crate::publish`]).
//! Thread mapping: see [`crate::thread::fold_vectorized`].
#[cfg(target_os = "cuda")]
use crate::{
    block,
    config::MinMax as Pair,
    ops::{Max, Min, MinMax, Sum},
    thread::fold_vectorized,
};
#[cfg(target_os = "cuda")]
use cuda_std::prelude::*;
#[cfg(target_os = "cuda")]
use half::{bf16, f16};

/// One entry point `$name` reducing `$e` with operator `$op` into accumulator `$acc`.
macro_rules! typed_entry {
    ($name:ident: $e:ty => $op:ty, $acc:ty) => {
        #[cfg(target_os = "cuda")]
        #[kernel]
        pub unsafe fn $name(
            input: &[$e], partials: *mut $acc, counter: *mut u32, out: *mut $acc, tagged: *mut u64, seq: u32,
        ) {
            crate::grid_dependency::wait_for_prerequisite_grids();
            let v = block::reduce::<$op>(fold_vectorized::<$e, $op>(input));
            block::finish_last_block::<$op, _>(v, partials, counter, block::Out { ptr: out, tagged, seq });
        }
    };
}

/// From one list of element types with their sum accumulators: the type and op lists the host
/// reads, and (on the GPU) `sum_`, `min_`, `max_` and `minmax_` of each type.
macro_rules! typed {
    ($($t:ident => $sum:ident),* $(,)?) => {
        /// Operations of the typed reductions; entry points are `{op}_{type}`, plus `sum_f32_f64acc`.
        pub const TYPED_OPS: [&str; 4] = ["sum", "min", "max", "minmax"];
        /// Element types of the typed reductions.
        pub const TYPED_TYPES: [&str; [$(stringify!($t)),*].len()] = [$(stringify!($t)),*];
        $( paste::paste! {
            typed_entry!([<sum_ $t>]: $t => Sum<$sum>, $sum);
            typed_entry!([<min_ $t>]: $t => Min<$t>, $t);
            typed_entry!([<max_ $t>]: $t => Max<$t>, $t);
            typed_entry!([<minmax_ $t>]: $t => MinMax<$t>, Pair<$t>);
        } )*
    };
}

/// The one list of element types with their sum accumulators, handed to `$family!`: the typed
/// reductions here and the axis reductions ([`crate::axis`]) take the same types.
macro_rules! typed_types {
    ($family:ident) => {
        $family! {
            u8 => u64,
            i8 => i64,
            u16 => u64,
            i16 => i64,
            i32 => i64,
            u32 => u64,
            f32 => f32,
            f64 => f64,
            f16 => f32,
            bf16 => f32,
        }
    };
}
pub(crate) use typed_types;

typed_types!(typed);
typed_entry!(sum_f32_f64acc: f32 => Sum<f64>, f64);
