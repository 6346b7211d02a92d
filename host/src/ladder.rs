//! The reduction ladder as the host names it: steps, finishes, strategies and entry points.
use crate::error::{Error, Result};
use crate::launch::{div_ceil, fast_launch, vectorized_grid};
use cust::memory::DeviceCopy;
use kernels::config::{LADDER_BLOCKS, LADDER_STEPS, LADDER_TYPES};

/// One step of the reduction ladder (see `kernels::reduce`), slowest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LadderKernel {
    InterleavedDivergent,
    InterleavedMask,
    InterleavedStrided,
    Sequential,
    FirstAdd,
    UnrolledWarp,
    CompleteUnroll,
    GlobalStride,
    LocalStride,
    WarpShuffle,
    Vectorized,
}

impl LadderKernel {
    pub const ALL: [LadderKernel; 11] = [
        LadderKernel::InterleavedDivergent,
        LadderKernel::InterleavedMask,
        LadderKernel::InterleavedStrided,
        LadderKernel::Sequential,
        LadderKernel::FirstAdd,
        LadderKernel::UnrolledWarp,
        LadderKernel::CompleteUnroll,
        LadderKernel::GlobalStride,
        LadderKernel::LocalStride,
        LadderKernel::WarpShuffle,
        LadderKernel::Vectorized,
    ];

    /// The step's name in the kernels' entry points (`kernels::config::LADDER_STEPS`).
    pub fn step_name(self) -> &'static str {
        LADDER_STEPS[self as usize]
    }

    /// Blocks to launch for `n` elements (the step's launch arithmetic); the host checks it
    /// against the device's largest grid (`launch::check_grid`).
    pub fn grid(self, n: usize, block: u32, grain: u32, sm_count: u32, max_threads_per_sm: u32) -> usize {
        let b = block as usize;
        let blocks = match self {
            LadderKernel::InterleavedDivergent
            | LadderKernel::InterleavedMask
            | LadderKernel::InterleavedStrided
            | LadderKernel::Sequential => div_ceil(n, b),
            LadderKernel::FirstAdd | LadderKernel::UnrolledWarp | LadderKernel::CompleteUnroll => div_ceil(n, 2 * b),
            LadderKernel::GlobalStride | LadderKernel::LocalStride | LadderKernel::WarpShuffle => {
                div_ceil(n, b * grain as usize)
            }
            LadderKernel::Vectorized => vectorized_grid(4 * n, block, grain, sm_count, max_threads_per_sm) as usize,
        };
        blocks.max(1)
    }
}

/// How the blocks' results are combined.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Finish {
    /// Blocks add atomically into the result: one launch, float results vary in the last bits.
    Atomic,
    /// Per-block partials, then a second deterministic kernel.
    SecondPass,
    /// Per-block partials copied back and summed on the host (f32 in f64).
    Host,
    /// The last block to finish folds the partials: one launch, deterministic.
    LastBlock,
    /// Each block stores its value with a ready flag in one 64-bit word; the grid's last block
    /// waits for the flags and folds in block order: one launch, deterministic, no atomics.
    Flagged,
}

/// Which kernel computes a sum.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceStrategy {
    /// The deterministic fast path: `Vectorized`, `Flagged`, block and grain by input size
    /// (`kernels::config::FAST_LAUNCH`). Same input, same bits.
    Auto,
    /// An explicit ladder step, finish, block size (`LADDER_BLOCKS`) and grain (≥ 1): elements
    /// per thread for the strided steps, 16-byte vectors per thread for `Vectorized` (until
    /// the grid reaches the resident blocks), unused by the others.
    Ladder { kernel: LadderKernel, finish: Finish, block: u32, grain: u32 },
}

impl Default for ReduceStrategy {
    fn default() -> Self {
        ReduceStrategy::Auto
    }
}

impl ReduceStrategy {
    /// The explicit strategy this one stands for on an input of `bytes`.
    pub fn resolve(self, bytes: usize) -> (LadderKernel, Finish, u32, u32) {
        match self {
            ReduceStrategy::Auto => {
                let (block, grain) = fast_launch(bytes);
                (LadderKernel::Vectorized, Finish::Flagged, block, grain)
            }
            ReduceStrategy::Ladder { kernel, finish, block, grain } => (kernel, finish, block, grain),
        }
    }

    /// Checks the block size and grain.
    pub fn validate(self) -> Result<()> {
        let (block, grain) = match self {
            ReduceStrategy::Auto => return Ok(()),
            ReduceStrategy::Ladder { block, grain, .. } => (block, grain),
        };
        if !LADDER_BLOCKS.contains(&block) {
            return Err(Error::Unsupported {
                what: format!("block size {} (the ladder has {:?})", block, LADDER_BLOCKS),
            });
        }
        if grain == 0 {
            return Err(Error::Unsupported { what: "grain 0 (elements per thread must be at least 1)".into() });
        }
        Ok(())
    }
}

/// Element types the ladder is built for.
pub trait SumElement: DeviceCopy + bytemuck::Zeroable + Default + std::fmt::Debug {
    const NAME: &'static str;
    /// Folds per-block partials on the host (f32 through f64; i32 wrapping, as on the device).
    fn host_sum(partials: &[Self]) -> Self;
}
impl SumElement for f32 {
    const NAME: &'static str = "f32";
    fn host_sum(partials: &[f32]) -> f32 {
        partials.iter().map(|&v| v as f64).sum::<f64>() as f32
    }
}
impl SumElement for i32 {
    const NAME: &'static str = "i32";
    fn host_sum(partials: &[i32]) -> i32 {
        partials.iter().fold(0i32, |a, &b| a.wrapping_add(b))
    }
}

/// The entry point of a ladder instance.
pub fn ladder_entry_point<T: SumElement>(kernel: LadderKernel, block: u32) -> String {
    entry_name(kernel, T::NAME, block)
}

fn entry_name(kernel: LadderKernel, type_name: &str, block: u32) -> String {
    format!("reduce_{}_{}_b{}", kernel.step_name(), type_name, block)
}

/// Every ladder entry point in (step, type, block) order: the first part of the table a `Gpu`
/// resolves at open (`entries`), so that a launch formats nothing; see [`ladder_index`].
pub(crate) fn ladder_names() -> Vec<String> {
    let mut names = Vec::new();
    for &kernel in LadderKernel::ALL.iter() {
        for &t in LADDER_TYPES.iter() {
            names.extend(LADDER_BLOCKS.iter().map(|&b| entry_name(kernel, t, b)));
        }
    }
    names
}

/// The position of an instance in [`ladder_names`] (`block` already validated).
pub(crate) fn ladder_index<T: SumElement>(kernel: LadderKernel, block: u32) -> usize {
    let t = LADDER_TYPES.iter().position(|&t| t == T::NAME).expect("a ladder type");
    let b = LADDER_BLOCKS.iter().position(|&b| b == block).expect("a ladder block");
    (kernel as usize * LADDER_TYPES.len() + t) * LADDER_BLOCKS.len() + b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ladder_index_finds_every_entry_point_in_the_name_table() {
        let names = ladder_names();
        assert_eq!(names.len(), LadderKernel::ALL.len() * LADDER_TYPES.len() * LADDER_BLOCKS.len());
        for &kernel in LadderKernel::ALL.iter() {
            for &block in LADDER_BLOCKS.iter() {
                assert_eq!(names[ladder_index::<f32>(kernel, block)], ladder_entry_point::<f32>(kernel, block));
                assert_eq!(names[ladder_index::<i32>(kernel, block)], ladder_entry_point::<i32>(kernel, block));
            }
        }
    }
}
