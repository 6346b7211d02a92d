//! How a kernel is launched for a shape: grid, block, and the extra arguments its launch kind
//! takes (`kernels::sgemv::SgemvLaunch`), as one typed plan.
use super::layout::SgemvLayout;
use super::shape::SgemvShape;
use crate::error::{Error, Result};
use crate::launch::{check_grid, div_ceil, resident_blocks};
use kernels::config::{
    sgemv_staged_rows, sgemv_wide_stride, SGEMV_BATCHED_ROWS, SGEMV_SPLIT_WAVES, SGEMV_T_MAX_LANES,
    SGEMV_T_ROWS_PER_THREAD, SGEMV_T_STREAM_VECS, SGEMV_T_WAVES, SGEMV_WIDE_ROWS, SGEMV_WIDE_TILE, SGEMV_WIDE_WAVES,
    VECTOR_UNROLL, WARP_SIZE,
};
use kernels::sgemv::{SgemvKernel, SgemvLaunch};

/// The arguments a kernel takes after `(a, x, m, n, lda, alpha, beta, y)`, before partials and
/// counters: one variant per launch kind that has any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SgemvExtra {
    None,
    /// Split-K: columns per chunk.
    SplitK {
        chunk: usize,
    },
    /// Wide rows: rows per group.
    WideRows {
        rows: usize,
    },
    /// Transposed: lanes per row and rows per split.
    Transposed {
        lanes: usize,
        rows_per_split: usize,
    },
    /// Striped transposed: rows per split and the columns the first tile starts early.
    Stripes {
        rows_per_split: usize,
        shift: usize,
    },
    /// Batched: the call's layout.
    Batched(SgemvLayout),
}

impl SgemvExtra {
    /// The values in the kernel's argument order.
    pub fn values(&self) -> Vec<usize> {
        match *self {
            SgemvExtra::None => Vec::new(),
            SgemvExtra::SplitK { chunk } => vec![chunk],
            SgemvExtra::WideRows { rows } => vec![rows],
            SgemvExtra::Transposed { lanes, rows_per_split } => vec![lanes, rows_per_split],
            SgemvExtra::Stripes { rows_per_split, shift } => vec![rows_per_split, shift],
            SgemvExtra::Batched(l) => {
                let b = l.batch;
                vec![l.incx, l.incy, b.stride_a, b.stride_x, b.stride_y, b.count]
            }
        }
    }
}

/// How one kernel is launched for one shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SgemvPlan {
    pub kernel: SgemvKernel,
    pub block: u32,
    pub grid: u32,
    /// Blocks sharing one tile of outputs (wide rows: the column tiles rounded up to a multiple
    /// of 4, the partials' row stride); above 1 the kernel needs partials and counters.
    pub splits: usize,
    /// Output tiles (split-K: rows; wide rows: row groups; transposed: column tiles): the
    /// counters needed; 0 for kernels that take no partials.
    pub tiles: usize,
    pub extra: SgemvExtra,
}

/// The device as planning sees it: its SMs and the threads of the kernel each keeps resident.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Occupancy {
    pub sm_count: u32,
    pub threads_per_sm: u32,
}

impl Occupancy {
    /// Blocks of `block` threads the device keeps resident, times `waves`.
    fn slots(self, block: u32, waves: u32) -> usize {
        (resident_blocks(block, self.sm_count, self.threads_per_sm) * waves) as usize
    }
}

fn fits(what: &'static str, grid: usize) -> Result<u32> {
    check_grid(grid.max(1), u32::MAX).map_err(|_| Error::TooLarge { what, len: grid, max: u32::MAX as usize })
}

impl SgemvPlan {
    /// The entry point it launches.
    #[cfg_attr(not(feature = "internals"), allow(dead_code))]
    pub fn name(&self) -> &'static str {
        self.kernel.entry_point()
    }

    /// The launch of `kernel` (built, not `Auto`) for `shape` on a device of `occupancy`.
    /// Row tiles: enough blocks for every warp to get a tile, at most the resident ones (warps
    /// then stride). Block per row: a block per row up to the resident ones. The split kinds
    /// split until the grid holds their waves of resident blocks (see each planner).
    #[cfg_attr(not(feature = "internals"), allow(dead_code))]
    pub fn new(kernel: SgemvKernel, shape: &SgemvShape, occupancy: Occupancy) -> Result<SgemvPlan> {
        SgemvPlan::in_layout(kernel, shape, &SgemvLayout::SINGLE, occupancy)
    }

    /// [`SgemvPlan::new`] for the problems of `layout` (which only the batched kernels take
    /// other than single): warps over every problem's rows, blocks over every problem's column
    /// tiles, at most the resident ones (they stride).
    pub fn in_layout(
        kernel: SgemvKernel,
        shape: &SgemvShape,
        layout: &SgemvLayout,
        occupancy: Occupancy,
    ) -> Result<SgemvPlan> {
        let launch = kernel.entry().ok_or_else(|| super::dispatch::not_built(kernel))?.launch;
        let block = launch.block();
        let (m, n) = (shape.m, shape.n);
        let plan = |grid: u32, splits, tiles, extra| SgemvPlan { kernel, block, grid, splits, tiles, extra };
        let resident = occupancy.slots(block, 1).max(1);
        Ok(match launch {
            SgemvLaunch::RowTiles(_) => {
                let rows_per_block = (block / WARP_SIZE) as usize * kernel.rows_per_warp_tile();
                plan(div_ceil(m, rows_per_block).clamp(1, resident) as u32, 1, 0, SgemvExtra::None)
            }
            SgemvLaunch::BlockPerRow => plan(m.clamp(1, resident) as u32, 1, 0, SgemvExtra::None),
            SgemvLaunch::StagedRows => {
                let tiles = div_ceil(m.max(1), sgemv_staged_rows(n, shape.lda));
                // As many blocks as give every block the same count of tiles (the last maybe
                // fewer), at most the resident ones: no tail of single late tiles.
                plan(div_ceil(tiles, div_ceil(tiles, resident)) as u32, 1, 0, SgemvExtra::None)
            }
            SgemvLaunch::Stream => {
                let tiles = div_ceil(n.max(1), 4 * (SGEMV_T_STREAM_VECS * block) as usize);
                plan(tiles.min(resident) as u32, 1, 0, SgemvExtra::None)
            }
            SgemvLaunch::SplitK => split_k(shape, occupancy.slots(block, SGEMV_SPLIT_WAVES), block, plan)?,
            SgemvLaunch::WideRows => wide_rows(shape, occupancy.slots(block, SGEMV_WIDE_WAVES), plan)?,
            SgemvLaunch::Transposed => transposed(shape, occupancy.slots(block, SGEMV_T_WAVES), block, plan)?,
            SgemvLaunch::Stripes => stripes(shape, kernel, occupancy.slots(block, SGEMV_T_WAVES), block, plan)?,
            SgemvLaunch::BatchedRows | SgemvLaunch::BatchedColumns => {
                let tasks = match launch {
                    SgemvLaunch::BatchedRows => div_ceil(m, (block / WARP_SIZE) as usize * SGEMV_BATCHED_ROWS),
                    _ => div_ceil(n, WARP_SIZE as usize),
                };
                let grid = tasks.saturating_mul(layout.batch.count);
                plan(grid.clamp(1, resident) as u32, 1, 0, SgemvExtra::Batched(*layout))
            }
        })
    }
}

/// Split-K: rows into chunks of at least four float4s per thread until the grid holds `target`
/// blocks.
fn split_k(
    shape: &SgemvShape,
    target: usize,
    block: u32,
    plan: impl Fn(u32, usize, usize, SgemvExtra) -> SgemvPlan,
) -> Result<SgemvPlan> {
    let (m, n) = (shape.m, shape.n);
    let min_chunk = 4 * (VECTOR_UNROLL * block) as usize;
    let splits = (target / m.max(1)).clamp(1, (n / min_chunk).max(1));
    let chunk = (div_ceil(n.max(1), splits) + 3) / 4 * 4;
    let splits = div_ceil(n.max(1), chunk);
    let grid = fits("m · splits (split-K grid)", m * splits)?;
    Ok(plan(grid, splits, m, SgemvExtra::SplitK { chunk }))
}

/// Wide rows: n in tiles of `SGEMV_WIDE_TILE` columns, rows in groups of fours (4 to
/// `SGEMV_WIDE_ROWS`) so that the grid holds about `target` blocks.
fn wide_rows(
    shape: &SgemvShape,
    target: usize,
    plan: impl Fn(u32, usize, usize, SgemvExtra) -> SgemvPlan,
) -> Result<SgemvPlan> {
    let (m, n) = (shape.m, shape.n);
    let tiles = div_ceil(n.max(1), SGEMV_WIDE_TILE);
    let rows = (div_ceil(m, (target / tiles).max(1)) + 3) / 4 * 4;
    let rows = rows.clamp(4, SGEMV_WIDE_ROWS);
    let groups = div_ceil(m, rows);
    let grid = fits("row groups · column tiles (wide-rows grid)", groups * tiles)?;
    let splits = if tiles > 1 { sgemv_wide_stride(tiles) } else { 1 };
    Ok(plan(grid, splits, groups, SgemvExtra::WideRows { rows }))
}

/// Transposed: the fewest lanes per row (≤ `SGEMV_T_MAX_LANES`) covering n / 4, more when m is
/// small (`SGEMV_T_ROWS_PER_THREAD`); rows split (≥ four per thread) until the grid holds
/// `target` blocks.
fn transposed(
    shape: &SgemvShape,
    target: usize,
    block: u32,
    plan: impl Fn(u32, usize, usize, SgemvExtra) -> SgemvPlan,
) -> Result<SgemvPlan> {
    let (m, n) = (shape.m, shape.n);
    // Lanes per row: enough for n / 4 (≤ SGEMV_T_MAX_LANES), more when rows are too few for
    // the block's row groups (a tile of at most one float4 per thread).
    let by_n = div_ceil(n.max(1), 4).next_power_of_two().min(SGEMV_T_MAX_LANES as usize);
    let by_m = (SGEMV_T_ROWS_PER_THREAD * block as usize / m.max(1)).next_power_of_two().min(block as usize / 4);
    let lanes = by_n.max(by_m).min(div_ceil(n.max(1), 4).next_power_of_two());
    let tiles = div_ceil(n.max(1), 4 * lanes);
    let groups = block as usize / lanes;
    let splits = (target / tiles).clamp(1, div_ceil(m, 4 * groups).max(1));
    let rows_per_split = div_ceil(m, splits).max(1);
    let splits = div_ceil(m, rows_per_split).max(1);
    let grid = fits("column tiles · splits (transposed grid)", tiles * splits)?;
    Ok(plan(grid, splits, tiles, SgemvExtra::Transposed { lanes, rows_per_split }))
}

/// Striped transposed: 32-column tiles (shifted onto aligned lines where rows allow), rows
/// split until the grid holds `target` blocks, every warp at least one batch of `depth` rows.
fn stripes(
    shape: &SgemvShape,
    kernel: SgemvKernel,
    target: usize,
    block: u32,
    plan: impl Fn(u32, usize, usize, SgemvExtra) -> SgemvPlan,
) -> Result<SgemvPlan> {
    let depth = match kernel {
        SgemvKernel::TStripes(depth) => depth as usize,
        _ => unreachable!("only TStripes launches as Stripes"),
    };
    let m = shape.m;
    let warps = (block / WARP_SIZE) as usize;
    let tiles = shape.stripes_tiles().max(1);
    let splits = (target / tiles).clamp(1, (m / (depth * warps)).max(1));
    let rows_per_split = div_ceil(m, splits).max(1);
    let splits = div_ceil(m, rows_per_split).max(1);
    let grid = fits("column tiles · splits (transposed grid)", tiles * splits)?;
    Ok(plan(grid, splits, tiles, SgemvExtra::Stripes { rows_per_split, shift: shape.stripes_shift() }))
}

#[cfg(test)]
mod tests;
