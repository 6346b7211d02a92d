//! The reduction ladder as the host names it: steps, finishes, strategies and entry points.
use crate::error::{Error, Result};
use crate::launch::{div_ceil, fast_launch, vectorized_grid};
use cust::memory::DeviceCopy;

pub use kernels::reduce::{LadderGrid, LadderKernel, LADDER_BLOCKS, LADDER_TYPES};

/// Blocks to launch for `n` elements of ladder step `kernel` (its launch arithmetic); the host
/// checks it against the device's largest grid (`launch::check_grid`).
pub fn ladder_grid(
    kernel: LadderKernel,
    n: usize,
    block: u32,
    grain: u32,
    sm_count: u32,
    max_threads_per_sm: u32,
) -> usize {
    let b = block as usize;
    let blocks = match kernel.grid_kind() {
        LadderGrid::PerThread(k) => div_ceil(n, b * k as usize),
        LadderGrid::Grain => div_ceil(n, b * grain as usize),
        LadderGrid::Vectorized => vectorized_grid(4 * n, block, grain, sm_count, max_threads_per_sm) as usize,
    };
    blocks.max(1)
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
    use kernels::config::FAST_LAUNCH;

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

    #[test]
    fn ladder_launch_arithmetic() {
        let (sms, tpsm) = (132, 2048);
        let g = |k: LadderKernel, n: usize, b: u32, grain: u32| ladder_grid(k, n, b, grain, sms, tpsm);
        assert_eq!(g(LadderKernel::InterleavedDivergent, 1025, 256, 1), 5);
        assert_eq!(g(LadderKernel::Sequential, 1024, 256, 1), 4);
        assert_eq!(g(LadderKernel::FirstAdd, 1025, 256, 1), 3);
        assert_eq!(g(LadderKernel::CompleteUnroll, 512, 256, 1), 1);
        assert_eq!(g(LadderKernel::GlobalStride, 1 << 20, 256, 8), 512);
        assert_eq!(g(LadderKernel::LocalStride, (1 << 20) + 1, 256, 8), 513);
        for k in LadderKernel::ALL.iter() {
            assert_eq!(g(*k, 0, 128, 1), 1, "{:?} must launch one block for empty input", k);
            assert_eq!(g(*k, 1, 1024, 3), 1);
        }
        // The vectorized grid covers small inputs with one vector per thread and stops at
        // the resident blocks for large ones.
        assert_eq!(g(LadderKernel::Vectorized, 1 << 20, 512, 1), 512);
        assert_eq!(g(LadderKernel::Vectorized, 1 << 20, 512, 4), 128);
        assert_eq!(g(LadderKernel::Vectorized, (1 << 20) + 1, 512, 4), 129);
        assert_eq!(g(LadderKernel::Vectorized, 1 << 28, 512, 1), 132 * 4);
        assert_eq!(g(LadderKernel::Vectorized, 1 << 28, 1024, 8), 132 * 2);
        // Every element-per-thread step covers n.
        for &n in [1usize, 31, 33, 1023, 1025, (1 << 20) + 3].iter() {
            for &b in LADDER_BLOCKS.iter() {
                for &grain in [1u32, 3, 8].iter() {
                    let blocks = g(LadderKernel::LocalStride, n, b, grain);
                    assert!(
                        blocks * b as usize * grain as usize >= n && (blocks - 1) * (b as usize) * (grain as usize) < n
                    );
                    let blocks = g(LadderKernel::FirstAdd, n, b, grain);
                    assert!(blocks * 2 * b as usize >= n && (blocks - 1) * 2 * (b as usize) < n);
                }
            }
        }
    }

    #[test]
    fn ladder_grids_past_2_pow_32_elements() {
        let (sms, tpsm) = (132, 2048);
        let n = (1usize << 32) + 5;
        // One element per thread: more than 2^32 threads, in a grid the device takes.
        let blocks = ladder_grid(LadderKernel::Sequential, n, 128, 1, sms, tpsm);
        assert_eq!(blocks, (n + 127) / 128);
        assert_eq!(crate::launch::check_grid(blocks, i32::MAX as u32), Ok(blocks as u32));
        assert_eq!(ladder_grid(LadderKernel::FirstAdd, n, 1024, 1, sms, tpsm), (n + 2047) / 2048);
        assert_eq!(ladder_grid(LadderKernel::GlobalStride, n, 256, 1, sms, tpsm), (n + 255) / 256);
        assert_eq!(
            ladder_grid(LadderKernel::Vectorized, n, 1024, 4, sms, tpsm),
            132 * 2,
            "capped at the resident blocks"
        );
        // A grid past the device's largest is a typed error, never a truncated launch.
        let huge = (i32::MAX as usize + 1) * 128;
        let blocks = ladder_grid(LadderKernel::InterleavedDivergent, huge, 128, 1, sms, tpsm);
        assert_eq!(
            crate::launch::check_grid(blocks, i32::MAX as u32),
            Err(Error::TooLarge { what: "grid blocks", len: i32::MAX as usize + 1, max: i32::MAX as usize })
        );
    }

    #[test]
    fn strategy_validation() {
        assert_eq!(ReduceStrategy::default(), ReduceStrategy::Auto);
        let auto = |bytes| ReduceStrategy::Auto.resolve(bytes);
        let fast = |row: usize| (LadderKernel::Vectorized, Finish::Flagged, FAST_LAUNCH[row].1, FAST_LAUNCH[row].2);
        assert_eq!(auto(4), fast(0));
        for row in 0..FAST_LAUNCH.len() - 1 {
            assert_eq!(auto(FAST_LAUNCH[row].0), fast(row), "the bound of row {} belongs to it", row);
            assert_eq!(auto(FAST_LAUNCH[row].0 + 4), fast(row + 1), "past row {} comes the next", row);
            assert!(FAST_LAUNCH[row].0 < FAST_LAUNCH[row + 1].0, "rows ascend");
        }
        assert_eq!(auto(usize::MAX), fast(FAST_LAUNCH.len() - 1), "the last row covers every size");
        for &(_, block, grain) in FAST_LAUNCH.iter() {
            assert!(LADDER_BLOCKS.contains(&block) && grain >= 1, "the fast path must be a ladder instance");
        }
        let s = |block, grain| ReduceStrategy::Ladder {
            kernel: LadderKernel::Sequential,
            finish: Finish::SecondPass,
            block,
            grain,
        };
        assert!(s(256, 1).validate().is_ok());
        assert!(matches!(s(100, 1).validate(), Err(Error::Unsupported { .. })));
        assert!(matches!(s(2048, 1).validate(), Err(Error::Unsupported { .. })));
        assert!(matches!(s(256, 0).validate(), Err(Error::Unsupported { .. })));
    }
}
