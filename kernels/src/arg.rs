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
//! `values` and `indices` hold one element each (two for argminmax: min, then max; argmin and
//! argmax take a null `values` to store the index alone), or `tagged`
//! holds the 8-byte aligned, device-addressable words of a value call, which take the result
//! instead, tagged with `seq` ([`crate::publish`]). A value call's grid of at most
//! [`crate::config::ARG_HOST_FOLD_BLOCKS`] blocks publishes every block's result, block `b`'s at word
//! `b · CHUNKS` (`CHUNKS` = 4, 8 for argminmax), for the host to fold in block order with
//! [`crate::arg_order::pick`]; `tagged` then holds that many words.
//!
//! # Thread mapping
//! Warp-contiguous batches: warp `w` of the grid's `W` takes batches `w, w + W, …` of 128
//! consecutive 16-byte vectors, lane `l` vectors `l + 32j` of each; the misaligned head and tail
//! elements as in [`crate::thread::fold_vectorized`]. See [`crate::thread::fold_arg_vectorized`]
//! for how indices are kept.
#[cfg(target_os = "cuda")]
use crate::{
    block::{self, Store},
    config::{MinMax as Pair, ValueIndex, ARG_HOST_FOLD_BLOCKS},
    ops::{
        arg::{ArgMax, ArgMin, ArgMinMax},
        ReduceOp,
    },
    publish::{publish, Bits, Chunks},
    thread::fold_arg_vectorized,
};
#[cfg(target_os = "cuda")]
use cuda_std::prelude::*;
#[cfg(target_os = "cuda")]
use cuda_std::thread::{block_idx_x, grid_dim_x, thread_idx_x};
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
            if !self.values.is_null() {
                *self.values = v.value;
            }
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

/// Hands on block result `v` (valid in thread 0): a small value call's block publishes it for
/// the host's fold; otherwise the last block folds every block's and stores the result.
#[cfg(target_os = "cuda")]
#[inline(always)]
unsafe fn finish<O: ReduceOp, T>(v: O::Acc, partials: *mut O::Acc, counter: *mut u32, out: ArgOut<T>)
where
    O::Acc: Chunks,
    ArgOut<T>: Store<O::Acc>,
{
    if !out.tagged.is_null() && grid_dim_x() <= ARG_HOST_FOLD_BLOCKS {
        if thread_idx_x() == 0 {
            publish(v, out.tagged.add(block_idx_x() as usize * <O::Acc as Chunks>::CHUNKS), out.seq);
        }
        return;
    }
    block::finish_last_block::<O, _>(v, partials, counter, out);
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
            crate::grid_dependency::wait_for_prerequisite_grids();
            let v = block::reduce::<$op>(fold_arg_vectorized::<$e, $op>(input));
            finish::<$op, $e>(v, partials, counter, ArgOut { values, indices, tagged, seq });
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
