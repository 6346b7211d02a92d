//! The reduction ladder (Harris, "Optimizing Parallel Reduction in CUDA", plus the shuffle and
//! vector steps): one kernel per step, f32 and i32 sums, block sizes 128–1024 as const generics.
//!
//! Every entry point is `reduce_{step}_{type}_b{block}(input, grain, mode, partials, counter, out)`:
//! - `input`: the elements; `grain`: elements per thread where the step takes several;
//! - `mode`: how blocks combine (see [`crate::config::finish`]);
//! - `partials`: one slot per block (`PARTIALS`, `LAST_BLOCK`), or one zeroed 64-bit slot per
//!   block (`FLAGGED`); `counter`: a zeroed u32 (`LAST_BLOCK`);
//! - `out`: the result (`ATOMIC`, `LAST_BLOCK`, `FLAGGED`; zeroed first for `ATOMIC`).
//!
//! Each step function returns the block's value, valid in thread 0.
//!
//! # Safety
//! Launch with `blockDim.x == B` (the entry point's block) and the grid the host's launch
//! arithmetic gives for the step; `partials` must hold `gridDim.x` elements (64-bit for `FLAGGED`).
use crate::block;
use crate::ops::Sum;
use cuda_std::prelude::*;

mod interleaved;
mod multi_element;
mod sequential;
mod tree;
mod unrolled;
mod vectorized;
mod warp_shuffle;

pub use interleaved::{interleaved_divergent, interleaved_mask, interleaved_strided};
pub use multi_element::{global_stride, local_stride};
pub use sequential::{first_add, sequential};
pub use unrolled::{complete_unroll, unrolled_warp};
pub use vectorized::vectorized;
pub use warp_shuffle::warp_shuffle;

macro_rules! ladder {
    ($($step:ident),* $(,)?) => { $( ladder!(@type $step f32); ladder!(@type $step i32); )* };
    (@type $step:ident $t:ident) => {
        ladder!(@one $step $t 128); ladder!(@one $step $t 256);
        ladder!(@one $step $t 512); ladder!(@one $step $t 1024);
    };
    (@one $step:ident $t:ident $b:literal) => { paste::paste! {
        #[kernel]
        pub unsafe fn [<reduce_ $step _ $t _b $b>](
            input: &[$t], grain: u32, mode: u32, partials: *mut $t, counter: *mut u32, out: *mut $t,
        ) {
            let v = $step::<Sum<$t>, $b>(input, grain);
            block::emit::<Sum<$t>>(v, mode, partials, counter, out);
        }
    }};
}

ladder!(
    interleaved_divergent,
    interleaved_mask,
    interleaved_strided,
    sequential,
    first_add,
    unrolled_warp,
    complete_unroll,
    global_stride,
    local_stride,
    warp_shuffle,
    vectorized,
);

macro_rules! second_pass {
    ($($t:ident),*) => { $( paste::paste! {
        /// Second pass: one block of `FINISH_BLOCK` threads folds the per-block partials in a
        /// fixed order and writes `out[0]`. Deterministic.
        #[kernel]
        pub unsafe fn [<reduce_finish_ $t>](partials: &[$t], out: *mut $t) {
            let total = block::reduce_array::<Sum<$t>>(partials.as_ptr(), partials.len());
            if cuda_std::thread::thread_idx_x() == 0 {
                *out = total;
            }
        }
    })* };
}
second_pass!(f32, i32);
