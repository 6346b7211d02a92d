//! Typed reductions: sum, min, max and minmax over u8…f64, one generic body (vector loads,
//! shuffles, last-block finish) instantiated per type and op: `{op}_{type}`.
//!
//! Sums accumulate wider: u8/u16/u32 → u64, i8/i16/i32 → i64, f32 → f32 (or f64 in
//! `sum_f32_f64acc`), f64 → f64. Float min/max propagate NaN (see [`crate::ops`]).
//!
//! # Safety
//! Launch with any block of whole warps up to `MAX_BLOCK` threads and any grid; `partials`
//! holds `gridDim.x` accumulators, `counter` is a u32 that is 0 before the launch (the kernel
//! leaves it 0), `out` one accumulator.
//! Thread mapping: see [`crate::thread::fold_vectorized`].
use crate::block;
use crate::config::MinMax as Pair;
use crate::ops::{Max, Min, MinMax, Sum};
use crate::thread::fold_vectorized;
use cuda_std::prelude::*;

macro_rules! typed {
    ($($name:ident: $e:ty => $op:ty, $acc:ty;)*) => {$(
        #[kernel]
        pub unsafe fn $name(input: &[$e], partials: *mut $acc, counter: *mut u32, out: *mut $acc) {
            let v = block::reduce::<$op>(fold_vectorized::<$e, $op>(input));
            block::finish_last_block::<$op>(v, partials, counter, out);
        }
    )*};
}

macro_rules! min_max {
    ($($t:ident),*) => { paste::paste! { typed! { $(
        [<min_ $t>]: $t => Min<$t>, $t;
        [<max_ $t>]: $t => Max<$t>, $t;
        [<minmax_ $t>]: $t => MinMax<$t>, Pair<$t>;
    )* } } };
}
min_max!(u8, i8, u16, i16, i32, u32, f32, f64);

typed! {
    sum_u8: u8 => Sum<u64>, u64;
    sum_u16: u16 => Sum<u64>, u64;
    sum_u32: u32 => Sum<u64>, u64;
    sum_i8: i8 => Sum<i64>, i64;
    sum_i16: i16 => Sum<i64>, i64;
    sum_i32: i32 => Sum<i64>, i64;
    sum_f32: f32 => Sum<f32>, f32;
    sum_f32_f64acc: f32 => Sum<f64>, f64;
    sum_f64: f64 => Sum<f64>, f64;
}
