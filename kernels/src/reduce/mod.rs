//! The reduction ladder (Harris, "Optimizing Parallel Reduction in CUDA", plus the shuffle and
//! vector steps): one kernel per step, f32 and i32 sums, block sizes 128–1024 as const generics.
//!
//! Every entry point is
//! `reduce_{step}_{type}_b{block}(input, grain, mode, partials, counter, out, tagged, seq)`:
//! - `input`: the elements; `grain`: elements per thread where the step takes several;
//! - `mode`: how blocks combine (see [`crate::config::finish`]);
//! - `partials`: one slot per block (`PARTIALS`, `LAST_BLOCK`), or one zeroed 64-bit slot per
//!   block (`FLAGGED`); `counter`: a zeroed u32 (`LAST_BLOCK`, `FLAGGED`);
//! - `out`: the result (`ATOMIC`, `LAST_BLOCK`, `FLAGGED`; zeroed first for `ATOMIC`);
//! - `tagged`, `seq`: null, or (`LAST_BLOCK`, `FLAGGED`) the host's words where a value call's
//!   result goes instead of `out`, tagged with its sequence number ([`crate::publish`]).
//!
//! The second pass `reduce_finish_{type}(partials, out, tagged, seq)` stores likewise.
//!
//! Each step function returns the block's value, valid in thread 0.
//!
//! # Safety
//! Launch with `blockDim.x == B` (the entry point's block) and the grid the host's launch
//! arithmetic gives for the step; `partials` must hold `gridDim.x` elements (64-bit for `FLAGGED`).
//! A `tagged` that is not null is device-addressable (page-locked, unified addressing) and
//! holds the 8-byte aligned words of one result's 32-bit chunks ([`crate::publish::Chunks`]).
#[cfg(target_os = "cuda")]
use crate::block::{self, Store};
#[cfg(target_os = "cuda")]
use crate::ops::Sum;
#[cfg(target_os = "cuda")]
use cuda_std::prelude::*;

gpu_modules!(interleaved, multi_element, reversed_tickets, sequential, tree, unrolled, vectorized, warp_shuffle);

#[cfg(target_os = "cuda")]
pub use self::{
    interleaved::{interleaved_divergent, interleaved_mask, interleaved_strided},
    multi_element::{global_stride, local_stride},
    sequential::{first_add, sequential},
    unrolled::{complete_unroll, unrolled_warp},
    vectorized::vectorized,
    warp_shuffle::warp_shuffle,
};

/// How many blocks a step takes for n elements (the host's launch arithmetic).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LadderGrid {
    /// This many elements per thread.
    PerThread(u32),
    /// `grain` elements per thread.
    Grain,
    /// `grain` 16-byte vectors per thread until the grid fills the device, then grid-stride.
    Vectorized,
}

/// From one list of steps, types and block sizes: the host's [`LadderKernel`] enum, the type
/// and block lists, and (on the GPU) an entry point `reduce_{step}_{type}_b{block}` for each,
/// plus a second pass `reduce_finish_{type}` per type.
macro_rules! ladder {
    (types: $types:tt, blocks: $blocks:tt, steps: { $($kernel:ident => $step:ident, $grid:ident $(($per:literal))?;)* }) => {
        /// One step of the reduction ladder, slowest first.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum LadderKernel { $($kernel),* }

        impl LadderKernel {
            /// Every step, in order.
            pub const ALL: [LadderKernel; [$(stringify!($kernel)),*].len()] = [$(LadderKernel::$kernel),*];

            /// The step's name in its entry points.
            pub const fn step_name(self) -> &'static str {
                match self { $(LadderKernel::$kernel => stringify!($step)),* }
            }

            /// How many blocks it takes.
            pub const fn grid_kind(self) -> LadderGrid {
                match self { $(LadderKernel::$kernel => LadderGrid::$grid $(($per))?),* }
            }
        }

        ladder!(@lists $types $blocks);
        $( ladder!(@step $step $types $blocks); )*
    };
    (@lists [$($t:ident),*] [$($b:literal),*]) => {
        /// Element types the ladder is instantiated for.
        pub const LADDER_TYPES: [&str; [$(stringify!($t)),*].len()] = [$(stringify!($t)),*];
        /// Block sizes the ladder is instantiated for (const generics, one entry point each).
        pub const LADDER_BLOCKS: [u32; [$($b),*].len()] = [$($b),*];
        $( ladder!(@second_pass $t); )*
    };
    (@second_pass $t:ident) => { paste::paste! {
        /// Second pass: one block of `FINISH_BLOCK` threads folds the per-block partials in a
        /// fixed order and stores the result in `out[0]` (or the tagged words). Deterministic.
        #[cfg(target_os = "cuda")]
        #[kernel]
        pub unsafe fn [<reduce_finish_ $t>](partials: &[$t], out: *mut $t, tagged: *mut u64, seq: u32) {
            crate::grid_dependency::wait_for_prerequisite_grids();
            let total = block::reduce_array::<Sum<$t>>(partials.as_ptr(), partials.len());
            if cuda_std::thread::thread_idx_x() == 0 {
                block::Out { ptr: out, tagged, seq }.store(total);
            }
        }
    }};
    (@step $step:ident [$($t:ident),*] $blocks:tt) => { $( ladder!(@type $step $t $blocks); )* };
    (@type $step:ident $t:ident [$($b:literal),*]) => { $( ladder!(@one $step $t $b); )* };
    (@one $step:ident $t:ident $b:literal) => { paste::paste! {
        #[cfg(target_os = "cuda")]
        #[kernel]
        pub unsafe fn [<reduce_ $step _ $t _b $b>](
            input: &[$t], grain: u32, mode: u32, partials: *mut $t, counter: *mut u32, out: *mut $t,
            tagged: *mut u64, seq: u32,
        ) {
            crate::grid_dependency::wait_for_prerequisite_grids();
            let ticket = block::start_ticket(mode, counter);
            let v = $step::<Sum<$t>, $b>(input, grain);
            block::emit::<Sum<$t>>(v, mode, ticket, partials, counter, block::Out { ptr: out, tagged, seq });
        }
    }};
}

ladder! {
    types: [f32, i32],
    blocks: [128, 256, 512, 1024],
    steps: {
        InterleavedDivergent => interleaved_divergent, PerThread(1);
        InterleavedMask => interleaved_mask, PerThread(1);
        InterleavedStrided => interleaved_strided, PerThread(1);
        Sequential => sequential, PerThread(1);
        FirstAdd => first_add, PerThread(2);
        UnrolledWarp => unrolled_warp, PerThread(2);
        CompleteUnroll => complete_unroll, PerThread(2);
        GlobalStride => global_stride, Grain;
        LocalStride => local_stride, Grain;
        WarpShuffle => warp_shuffle, Grain;
        Vectorized => vectorized, Vectorized;
    }
}
