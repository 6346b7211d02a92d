//! Arg reductions: argmin, argmax and argminmax over u8…f64, f16 and bf16, one generic body per op and type:
//! `{op}_{type}`. Each result is a value and its first index (u64): ties go to the smallest
//! index; for floats NaN is the extreme both ways (the first NaN wins, as in `torch.argmax`) and
//! -0.0 is below +0.0, so argmax's value is the typed `max`'s (see [`crate::ops::arg`]).
//!
//! Every entry point takes `(input, partials, counter, values, indices, tagged, seq)`.
//!
//! # Safety
//! Launch with any block of whole warps up to `MAX_BLOCK` threads and any grid; `partials`
//! holds `gridDim.x` accumulators (a `ValueIndex<T>`, or a `MinMax` of two for argminmax),
//! `counter` is a u32 that is 0 before the launch (the kernel leaves it 0); `tagged` is null and
//! `values` and `indices` hold one element each (two for argminmax: min, then max), or `tagged`
//! holds the 8-byte aligned, device-addressable words of a value call, which take the result
//! instead, tagged with `seq` ([`crate::publish`]).
//!
//! # Thread mapping
//! As [`crate::thread::fold_vectorized`]: vector `i` goes to global thread `i mod (threads in
//! grid)`; see [`crate::thread::fold_arg_vectorized`] for how indices are kept.
#[cfg(target_os = "cuda")]
use crate::{
    block::{self, Store},
    config::{MinMax as Pair, ValueIndex},
    ops::arg::{ArgMax, ArgMin, ArgMinMax},
    publish::{publish, Bits},
    thread::fold_arg_vectorized,
};
#[cfg(target_os = "cuda")]
use cuda_std::prelude::*;
#[cfg(target_os = "cuda")]
use half::{bf16, f16};

/// Where an arg kernel's result goes: `values`/`indices` in device memory, or the host's tagged
/// words when `tagged` is not null.
#[cfg(target_os = "cuda")]
#[derive(Clone, Copy)]
struct ArgOut<T> {
    values: *mut T,
    indices: *mut u64,
    tagged: *mut u64,
    seq: u32,
}

#[cfg(target_os = "cuda")]
impl<T: Bits> Store<ValueIndex<T>> for ArgOut<T> {
    #[inline(always)]
    unsafe fn store(self, v: ValueIndex<T>) {
        if self.tagged.is_null() {
            *self.values = v.value;
            *self.indices = v.index;
        } else {
            publish(v, self.tagged, self.seq);
        }
    }
}

#[cfg(target_os = "cuda")]
impl<T: Bits> Store<Pair<ValueIndex<T>>> for ArgOut<T> {
    #[inline(always)]
    unsafe fn store(self, v: Pair<ValueIndex<T>>) {
        if self.tagged.is_null() {
            *self.values = v.min.value;
            *self.indices = v.min.index;
            *self.values.add(1) = v.max.value;
            *self.indices.add(1) = v.max.index;
        } else {
            publish(v, self.tagged, self.seq);
        }
    }
}

/// One entry point `$name` reducing `$e` with arg operator `$op` into accumulator `$acc`.
macro_rules! arg_entry {
    ($name:ident: $e:ty => $op:ty, $acc:ty) => {
        #[cfg(target_os = "cuda")]
        #[kernel]
        pub unsafe fn $name(
            input: &[$e], partials: *mut $acc, counter: *mut u32, values: *mut $e, indices: *mut u64, tagged: *mut u64,
            seq: u32,
        ) {
            let v = block::reduce::<$op>(fold_arg_vectorized::<$e, $op>(input));
            let out = ArgOut { values, indices, tagged, seq };
            block::finish_last_block::<$op, _>(v, partials, counter, out);
        }
    };
}

/// From one list of element types: the type and op lists the host reads, and (on the GPU)
/// `argmin_`, `argmax_` and `argminmax_` of each type.
macro_rules! arg {
    ($($t:ident),* $(,)?) => {
        /// Operations of the arg reductions; entry points are `{op}_{type}`.
        pub const ARG_OPS: [&str; 3] = ["argmin", "argmax", "argminmax"];
        /// Element types of the arg reductions.
        pub const ARG_TYPES: [&str; [$(stringify!($t)),*].len()] = [$(stringify!($t)),*];
        $( paste::paste! {
            arg_entry!([<argmin_ $t>]: $t => ArgMin<$t>, ValueIndex<$t>);
            arg_entry!([<argmax_ $t>]: $t => ArgMax<$t>, ValueIndex<$t>);
            arg_entry!([<argminmax_ $t>]: $t => ArgMinMax<$t>, Pair<ValueIndex<$t>>);
        } )*
    };
}

arg! { u8, i8, u16, i16, i32, u32, f32, f64, f16, bf16 }
