//! Which half-precision gemv kernel runs a call and how it is launched: pure functions of the
//! checked shape, layout and device (SM count, resident blocks), tested here without a GPU.
use super::layout::SgemvLayout;
use super::shape::SgemvShape;
use crate::launch::{div_ceil, resident_blocks};
use kernels::config::{SGEMV_BATCHED_BLOCK, SGEMV_BATCHED_ROWS, VECTOR_BYTES, WARP_SIZE};
use kernels::sgemv::half_gemv::GemvLoads;
use kernels::sgemv::row_walk::RowWalk;
use kernels::sgemv::Op;

/// Which half-precision kernel runs a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HalfGemvChoice {
    /// The batched kernel of the op, scalar loads (any alignment or increment).
    Scalar,
    /// Op::N with 16-byte loads, `lanes` per row, the rows walked as `walk` says: the `_ns`
    /// entries for [`RowWalk::Short`] (short rows of halves), `_ns4` for
    /// [`RowWalk::ShallowShort`], the `_nv` ones otherwise.
    VectorRows { lanes: usize, walk: RowWalk },
    /// Op::T with 16-byte loads of A (eight columns per thread), planned by
    /// [`vector_columns_plan`].
    VectorColumns,
}

impl HalfGemvChoice {
    /// The loads of the entry that runs this choice.
    pub fn loads(self) -> GemvLoads {
        match self {
            HalfGemvChoice::Scalar => GemvLoads::Scalar,
            HalfGemvChoice::VectorRows { walk: RowWalk::Short, .. } => GemvLoads::ShortRows,
            HalfGemvChoice::VectorRows { walk: RowWalk::ShallowShort, .. } => GemvLoads::ShallowShortRows,
            HalfGemvChoice::VectorRows { .. } | HalfGemvChoice::VectorColumns => GemvLoads::Vector,
        }
    }
}

/// `Auto`'s choice for a checked shape in `layout` with element sizes `[A, x, y]` in bytes:
/// Op::N with `incx == 1` and every row start of A and every problem's x 16-byte aligned
/// takes [`HalfGemvChoice::VectorRows`], with the fewest lanes (at least 8, so that the last
/// n % 8 columns find a lane each) that cover a row's 8-element vectors, up to 32, and the
/// walk [`RowWalk::of`] gives every problem's rows. Op::T
/// with n a multiple of 8 (n ≥ 8) and every row start of A 16-byte aligned takes
/// [`HalfGemvChoice::VectorColumns`] (x and y in any layout); the rest
/// [`HalfGemvChoice::Scalar`] (incx above 1 for Op::N, or unaligned rows: correct, slower).
pub fn half_gemv_choice(shape: &SgemvShape, layout: &SgemvLayout, sizes: [usize; 3]) -> HalfGemvChoice {
    let aligned = |bytes: u64| bytes % VECTOR_BYTES as u64 == 0;
    let batched = layout.batch.count > 1;
    let [a_size, x_size, _] = sizes;
    let rows_aligned = aligned(shape.a_addr)
        && aligned((shape.lda * a_size) as u64)
        && (!batched || aligned((layout.batch.stride_a * a_size) as u64));
    if shape.op == Op::T {
        let whole = shape.n >= 8 && shape.n % 8 == 0;
        return if rows_aligned && whole { HalfGemvChoice::VectorColumns } else { HalfGemvChoice::Scalar };
    }
    let x_aligned =
        aligned(shape.x_addr) && layout.incx == 1 && (!batched || aligned((layout.batch.stride_x * x_size) as u64));
    if !rows_aligned || !x_aligned {
        return HalfGemvChoice::Scalar;
    }
    let lanes = div_ceil(shape.n, 8).next_power_of_two().clamp(8, WARP_SIZE as usize);
    let rows = shape.m.saturating_mul(layout.batch.count);
    HalfGemvChoice::VectorRows { lanes, walk: RowWalk::of(rows, shape.n, [a_size, x_size], lanes) }
}

/// Tiles of [`RowWalk::Short`] per resident warp below which short rows walk as
/// [`RowWalk::ShallowShort`]: on the H200's attention scores, 0.3–1.3 deep tiles per warp ran
/// 8–16% faster shallow, 2.6 within 2%, 5.2 and more 7–14% slower (tuning log, four rows a
/// group).
pub const SHALLOW_TILES_PER_WARP: usize = 2;

/// The walk of `rows` short rows (every problem's, [`RowWalk::Short`] by [`half_gemv_choice`])
/// with `lanes` per row on `sm_count` SMs that keep `blocks_per_sm` blocks of the `Short`
/// entry each: [`RowWalk::ShallowShort`] where `Short` tiles would give each resident warp
/// fewer than [`SHALLOW_TILES_PER_WARP`] (the last tiles then leave most warps idle, and half
/// as deep a tile halves that tail), else `Short`.
pub fn short_walk(rows: usize, lanes: usize, sm_count: u32, blocks_per_sm: u32) -> RowWalk {
    let warps_per_block = (SGEMV_BATCHED_BLOCK / WARP_SIZE) as usize;
    let warps = (sm_count as usize).saturating_mul(blocks_per_sm as usize).saturating_mul(warps_per_block);
    if div_ceil(rows, RowWalk::Short.tile_rows(lanes)) < SHALLOW_TILES_PER_WARP.saturating_mul(warps) {
        RowWalk::ShallowShort
    } else {
        RowWalk::Short
    }
}

/// Blocks of `SGEMV_BATCHED_BLOCK` threads for a vectorized Op::N kernel that walks `rows`
/// rows (every problem's) as `walk` with `lanes` per row: one tile
/// ([`RowWalk::tile_rows`]) per warp, at most the resident blocks (`blocks_per_sm` each on
/// `sm_count` SMs; warps then stride).
pub fn vector_rows_grid(rows: usize, walk: RowWalk, lanes: usize, sm_count: u32, blocks_per_sm: u32) -> usize {
    let warps = (SGEMV_BATCHED_BLOCK / WARP_SIZE) as usize;
    let resident = resident_blocks(SGEMV_BATCHED_BLOCK, sm_count, blocks_per_sm * SGEMV_BATCHED_BLOCK) as usize;
    div_ceil(rows, warps * walk.tile_rows(lanes)).clamp(1, resident.max(1))
}

/// How the vectorized Op::T kernel runs: threads per row (8 columns each), the rows of one
/// split, splits, column tiles per problem and the grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VectorColumnsPlan {
    pub lanes: usize,
    pub rows_per_split: usize,
    pub splits: usize,
    pub tiles: usize,
    pub grid: usize,
}

/// Rows per thread of a split that the choice of tile width counts on: narrower tiles take the
/// place of splits only where splits of this many rows would not fill the wave (one batch of
/// `SGEMV_BATCHED_ROWS` loads; counting splits of [`MIN_SPLIT_ROWS_PER_THREAD`] instead narrowed
/// 32 × 4096 × 64 to four threads per row, 10.3 → 10.7 µs: tuning log, the 512-row heads).
const MIN_ROWS_PER_THREAD: usize = 4;

/// Rows a thread of the vectorized Op::T kernel walks at least in a split: two batches of
/// `SGEMV_BATCHED_ROWS` loads. A split of one batch costs more in the hand-off (fence, ticket,
/// fold of the splits) than it saves: 64 × 512 × 128 bf16 took 7.8 µs in two splits of one
/// batch a thread and 5.8 in one split of two (tuning log, the 512-row heads).
const MIN_SPLIT_ROWS_PER_THREAD: usize = 2 * SGEMV_BATCHED_ROWS;

/// Threads per row of the vectorized Op::T kernel at most: a warp reads 256 consecutive
/// elements of a row, and the block's eight row groups keep `SGEMV_BATCHED_ROWS` rows each in
/// flight, while 8 · lanes columns leave a thread of the block per column to fold.
pub const MAX_COLUMN_LANES: usize = WARP_SIZE as usize;

/// Threads per row of the vectorized Op::T kernel at least, where narrower tiles take the place
/// of splits: a tile then reads 64 bytes or more of each row (on the 512-row attention heads,
/// halves 6–15% faster than at two threads per row, f32 −2% to +10%, measured with the block's
/// fold before the warp butterflies: tuning log, the 512-row heads). [`one_split_plan`] has
/// its own.
pub const MIN_COLUMN_LANES: usize = 4;

/// A split's rows past its last whole pass of the block (`SGEMV_BATCHED_ROWS` rows per row
/// group) are loaded one at a time, each costing 0.5–0.8 of a whole pass (Llama Op::T shapes,
/// tuning log): a split whose tail fills more than 1 / 4 of a pass is rounded up to whole
/// passes, whose added rows then cost less than the tail did.
const SPLIT_TAIL_PARTS: usize = 4;

/// Column tiles a problem takes in [`one_split_plan`]: four. Eight at the same number of blocks
/// (32 × 4096 × 128 at two threads per row) were 4–6% slower on halves on an H100 (f32 1%
/// faster; tuning log, the butterfly fold).
const ONE_SPLIT_TILES: usize = 4;

/// Threads per row of [`one_split_plan`] at least: at one thread per row, one split was 6–64%
/// slower than Auto's splits on every 4,096-row head (H100, tuning log).
const ONE_SPLIT_MIN_LANES: usize = 2;

/// Rows a thread walks in [`one_split_plan`] at most: 32 and 64 measured (the 4,096-row heads,
/// 2–6% faster than Auto's splits); longer walks keep the splits, whose hand-off is a smaller
/// part of the call.
const ONE_SPLIT_MAX_ROWS_PER_THREAD: usize = 64;

/// Splits of one problem at most where a whole wave of more than [`SHORT_WALK_MANY_SPLITS`]
/// would leave each thread fewer than [`SHORT_WALK_ROWS_PER_THREAD`] rows:
/// [`short_walk_split_plan`].
const SHORT_WALK_MAX_SPLITS: usize = 8;

/// Splits of a whole wave above which short walks take [`SHORT_WALK_MAX_SPLITS`]: 32 measured
/// (4096², 14336 × 4096). 4096 × 14336 keeps its 9 splits of 57 rows a thread: half a wave
/// there (4 splits, or 2 at 16 threads a row) was 0.5–2% slower.
const SHORT_WALK_MANY_SPLITS: usize = 16;

/// Rows per thread below which a whole wave of splits walks too short for its hand-off: at 16
/// and 56 (4096², 14336 × 4096) half a wave in 8 splits was faster, at 224 and 488 (28672 ×
/// 8192, 128256 × 4096) slower.
const SHORT_WALK_ROWS_PER_THREAD: usize = 64;

/// One split of [`ONE_SPLIT_TILES`] narrow tiles per problem, where the problems' tiles alone
/// give every SM a block and fit one wave of `wave` blocks, each thread walking at most
/// [`ONE_SPLIT_MAX_ROWS_PER_THREAD`] rows: no hand-off across blocks (fence, ticket, the last
/// block's pass over the partials). The block's fold of its row groups by warp butterflies
/// costs eight adds a column at any threads per row (with the serial fold before it, 256 /
/// lanes).
fn one_split_plan(m: usize, n: usize, batch: usize, sm_count: u32, wave: usize) -> Option<VectorColumnsPlan> {
    let lanes = div_ceil(n, 8 * ONE_SPLIT_TILES).next_power_of_two().max(ONE_SPLIT_MIN_LANES);
    if lanes > MAX_COLUMN_LANES {
        return None;
    }
    let tiles = column_tiles(n, lanes);
    let grid = batch.saturating_mul(tiles);
    let rows_per_thread = div_ceil(m, SGEMV_BATCHED_BLOCK as usize / lanes);
    let fits = tiles == ONE_SPLIT_TILES
        && grid >= sm_count as usize
        && grid <= wave
        && rows_per_thread <= ONE_SPLIT_MAX_ROWS_PER_THREAD;
    fits.then(|| VectorColumnsPlan { lanes, rows_per_split: m.max(1), splits: 1, tiles, grid })
}

/// [`VectorColumnsPlan`] for `batch` problems of m × n (n a multiple of 8) on `sm_count` SMs
/// keeping `blocks_per_sm` blocks each: the fewest threads per row (a power of two up to
/// [`MAX_COLUMN_LANES`]) covering n / 8, then rows split until the grid fills one wave, each
/// split at least [`MIN_SPLIT_ROWS_PER_THREAD`] rows per thread, and rounded up to whole passes where
/// [`SPLIT_TAIL_PARTS`] says (which may leave the wave a few blocks short). When even the most
/// splits would not fill the wave (few rows), narrower tiles (down to [`MIN_COLUMN_LANES`])
/// take the place of splits: as many blocks, without the fold across blocks (a fence, a ticket
/// and a pass over the partials at the end of the launch). Where that still splits rows,
/// [`one_split_plan`] takes its place when it applies, else [`short_walk_split_plan`].
pub fn vector_columns_plan(m: usize, n: usize, batch: usize, sm_count: u32, blocks_per_sm: u32) -> VectorColumnsPlan {
    let wave = (sm_count as usize * blocks_per_sm.max(1) as usize).max(1);
    let plan = whole_wave_plan(m, n, batch, wave);
    if plan.splits > 1 {
        if let Some(plan) = one_split_plan(m, n, batch, sm_count, wave) {
            return plan;
        }
        if let Some(plan) = short_walk_split_plan(m, n, batch, sm_count, &plan) {
            return plan;
        }
    }
    plan
}

/// [`vector_columns_plan`] before [`one_split_plan`] and [`short_walk_split_plan`]: tiles and
/// splits for one wave of `wave` blocks.
fn whole_wave_plan(m: usize, n: usize, batch: usize, wave: usize) -> VectorColumnsPlan {
    let narrowing_splits = |lanes: usize| max_splits(m, lanes, MIN_ROWS_PER_THREAD);
    let mut lanes = (n / 8).max(1).next_power_of_two().min(MAX_COLUMN_LANES);
    while lanes > MIN_COLUMN_LANES
        && narrowing_splits(lanes) > 1
        && batch.saturating_mul(column_tiles(n, lanes)).saturating_mul(narrowing_splits(lanes)) < wave
    {
        lanes /= 2;
    }
    let tiles = column_tiles(n, lanes);
    let base = batch.saturating_mul(tiles).max(1);
    let splits = (wave / base).clamp(1, max_splits(m, lanes, MIN_SPLIT_ROWS_PER_THREAD));
    split_plan(m, batch, lanes, tiles, splits)
}

/// Column tiles of `8 · lanes` columns over n columns; at least one.
fn column_tiles(n: usize, lanes: usize) -> usize {
    div_ceil(n, 8 * lanes).max(1)
}

/// The most splits of m rows giving each of a block's row groups (`lanes` threads each) `rows`
/// rows a thread; at least one.
fn max_splits(m: usize, lanes: usize, rows: usize) -> usize {
    (m / ((SGEMV_BATCHED_BLOCK as usize / lanes) * rows)).max(1)
}

/// `batch` problems' m rows in about `splits` splits of whole tiles `8 · lanes` columns wide,
/// a split rounded up to whole passes of the block (`SGEMV_BATCHED_ROWS` rows per row group)
/// where its tail would fill more than [`SPLIT_TAIL_PARTS`] says.
fn split_plan(m: usize, batch: usize, lanes: usize, tiles: usize, splits: usize) -> VectorColumnsPlan {
    let mut rows_per_split = div_ceil(m, splits.max(1)).max(1);
    let pass = (SGEMV_BATCHED_BLOCK as usize / lanes) * SGEMV_BATCHED_ROWS;
    if splits > 1 && rows_per_split % pass > pass / SPLIT_TAIL_PARTS {
        rows_per_split = div_ceil(rows_per_split, pass) * pass;
    }
    let splits = div_ceil(m, rows_per_split).max(1);
    let grid = batch.saturating_mul(tiles).max(1).saturating_mul(splits);
    VectorColumnsPlan { lanes, rows_per_split, splits, tiles, grid }
}

/// One problem whose whole wave of more than [`SHORT_WALK_MANY_SPLITS`] splits leaves each
/// thread fewer than [`SHORT_WALK_ROWS_PER_THREAD`] rows takes [`SHORT_WALK_MAX_SPLITS`]
/// splits at most, its tiles halved in width while the grid would leave an SM without a
/// block: fewer, longer walks and fewer partials for the last block of a tile to fold. On an
/// H100, 4096² and 14336 × 4096 in halves went from 32 threads a row in 32 splits (512 blocks)
/// to 16 threads a row in 8 splits (256 blocks): 15.9–16.0 → 15.3–15.4 µs and 42.5–42.8 →
/// 41.9–42.1. Longer walks keep the whole wave: 128256 × 4096 at 16 threads and 8 splits was
/// 1% slower, 28672 × 8192 0.5% (tuning log, Op::T plans on the Llama shapes). Batches keep
/// their plan: 32 × 4096 × 128 f32 at 8 splits instead of 16 was 2% slower.
fn short_walk_split_plan(
    m: usize,
    n: usize,
    batch: usize,
    sm_count: u32,
    whole_wave: &VectorColumnsPlan,
) -> Option<VectorColumnsPlan> {
    let rows_per_thread = whole_wave.rows_per_split / (SGEMV_BATCHED_BLOCK as usize / whole_wave.lanes);
    if batch != 1 || whole_wave.splits <= SHORT_WALK_MANY_SPLITS || rows_per_thread >= SHORT_WALK_ROWS_PER_THREAD {
        return None;
    }
    let mut lanes = whole_wave.lanes;
    while lanes > MIN_COLUMN_LANES && column_tiles(n, lanes) * SHORT_WALK_MAX_SPLITS <= sm_count as usize {
        lanes /= 2;
    }
    let splits = SHORT_WALK_MAX_SPLITS.min(max_splits(m, lanes, MIN_SPLIT_ROWS_PER_THREAD));
    Some(split_plan(m, 1, lanes, column_tiles(n, lanes), splits))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sgemv::layout::SgemvBatch;

    fn shape(op: Op, m: usize, n: usize, lda: usize, a_addr: u64, x_addr: u64) -> SgemvShape {
        SgemvShape { op, m, n, lda, a_addr, x_addr }
    }

    fn batch(count: usize, stride_a: usize, stride_x: usize) -> SgemvLayout {
        let batch = SgemvBatch { count, stride_a, stride_x, stride_y: 1 << 20 };
        SgemvLayout { incx: 1, incy: 1, batch }
    }

    #[test]
    fn aligned_op_n_takes_the_vector_kernel_with_lanes_by_row_length() {
        let bf16_f32 = [2, 4, 4];
        // (n, lanes, walk): attention head sizes, Llama rows, edge widths; 4096 rows.
        let medium = RowWalk::Medium;
        let widths = [(1, 8, medium), (8, 8, medium), (64, 8, medium), (72, 16, medium), (128, 16, medium)];
        let longer = [(256, 32, medium), (4096, 32, RowWalk::Long), (14336, 32, RowWalk::Long)];
        for &(n, lanes, walk) in widths.iter().chain(longer.iter()) {
            let lda = (n + 7) / 8 * 8;
            let choice = half_gemv_choice(&shape(Op::N, 4096, n, lda, 256, 512), &SgemvLayout::SINGLE, bf16_f32);
            assert_eq!(choice, HalfGemvChoice::VectorRows { lanes, walk }, "n = {}", n);
        }
        // Attention scores: K caches of 32 and 64 heads, one problem each; from 2^15 rows in
        // all, short rows of halves take their own entries.
        let scores =
            [(32, 512, 64, 8, false), (64, 512, 128, 16, true), (32, 4096, 128, 16, true), (64, 32768, 128, 16, true)];
        for &(heads, kv, head, lanes, short) in scores.iter() {
            let call = shape(Op::N, kv, head, head, 0, 0);
            let layout = batch(heads, kv * head, head);
            let walk = if short { RowWalk::Short } else { RowWalk::Medium };
            let want = HalfGemvChoice::VectorRows { lanes, walk };
            assert_eq!(half_gemv_choice(&call, &layout, [2, 2, 2]), want, "{} x {} x {}", heads, kv, head);
            assert_eq!(half_gemv_choice(&call, &layout, [2, 2, 4]), want, "f32 y");
            let wide = half_gemv_choice(&call, &layout, [2, 4, 4]);
            assert_eq!(wide, HalfGemvChoice::VectorRows { lanes, walk: RowWalk::Medium }, "f32 x: medium rows");
        }
        let long = shape(Op::N, 1 << 16, 264, 264, 0, 0);
        let medium = HalfGemvChoice::VectorRows { lanes: 32, walk: RowWalk::Medium };
        assert_eq!(half_gemv_choice(&long, &SgemvLayout::SINGLE, [2, 2, 2]), medium);
        assert_eq!(HalfGemvChoice::VectorRows { lanes: 8, walk: RowWalk::Short }.loads(), GemvLoads::ShortRows);
        let shallow = HalfGemvChoice::VectorRows { lanes: 8, walk: RowWalk::ShallowShort };
        assert_eq!(shallow.loads(), GemvLoads::ShallowShortRows);
        assert_eq!(medium.loads(), GemvLoads::Vector);
        assert_eq!(HalfGemvChoice::VectorColumns.loads(), GemvLoads::Vector);
        assert_eq!(HalfGemvChoice::Scalar.loads(), GemvLoads::Scalar);
    }

    fn strided_x(incx: usize) -> SgemvLayout {
        SgemvLayout { incx, ..SgemvLayout::SINGLE }
    }

    #[test]
    fn vector_columns_plan_fills_one_wave_with_splits_of_enough_rows() {
        // Attention values: 32 heads, n = 128 (16 threads per row, 16 row groups), one tile.
        let p = vector_columns_plan(32768, 128, 32, 132, 4);
        assert_eq!((p.lanes, p.tiles), (16, 1));
        assert_eq!(p.splits, 528 / 32);
        assert_eq!(p.grid, 32 * p.splits);
        assert!(p.rows_per_split * p.splits >= 32768 && p.rows_per_split * (p.splits - 1) < 32768);
        // Few rows: where even the most splits leave the wave short, narrower tiles replace them,
        // down to MIN_COLUMN_LANES = 4 threads per row; no split below MIN_SPLIT_ROWS_PER_THREAD
        // = 8 rows per thread. 512 rows of 64 or 128 take 4 threads per row, 64 groups of 8
        // rows, no split (two splits of 4 rows a thread would fill the wave, and be slower).
        let p = vector_columns_plan(512, 64, 32, 132, 4);
        assert_eq!((p.lanes, p.tiles, p.splits, p.grid), (4, 2, 1, 64));
        let p = vector_columns_plan(512, 128, 64, 132, 4);
        assert_eq!((p.lanes, p.tiles, p.splits, p.grid), (4, 4, 1, 256));
        let p = vector_columns_plan(1024, 64, 32, 132, 4);
        assert_eq!((p.lanes, p.tiles, p.splits), (4, 2, 2), "two splits of 8 rows a thread");
        assert_eq!(vector_columns_plan(255, 64, 1, 132, 4).splits, 1);
        assert_eq!(vector_columns_plan(255, 64, 1, 132, 4).lanes, 8, "one split at most: tiles stay");
        let p = vector_columns_plan(256, 64, 1, 132, 4);
        assert_eq!((p.lanes, p.tiles, p.splits), (4, 2, 1));
        // Never narrower than MIN_COLUMN_LANES, even when splits remain.
        let p = vector_columns_plan(2048, 64, 1, 132, 4);
        assert_eq!((p.lanes, p.tiles), (MIN_COLUMN_LANES, 2));
        assert_eq!(p.splits, 2048 / ((SGEMV_BATCHED_BLOCK as usize / MIN_COLUMN_LANES) * MIN_SPLIT_ROWS_PER_THREAD));
        // Rows enough to fill the wave with splits: the tiles stay whole (32 heads of 4,096 rows:
        // four tiles a problem would leave SMs without a block).
        let p = vector_columns_plan(4096, 64, 32, 132, 4);
        assert_eq!((p.lanes, p.tiles, p.splits), (8, 1, 16));
        let p = vector_columns_plan(4096, 128, 32, 132, 4);
        assert_eq!((p.lanes, p.tiles, p.splits), (16, 1, 16));
        // 64 heads of 4,096 rows: four tiles a problem give every SM a block in one split, each
        // thread on 32 or 64 rows, instead of 8 splits with their hand-off.
        let p = vector_columns_plan(4096, 64, 64, 132, 4);
        assert_eq!((p.lanes, p.tiles, p.splits, p.rows_per_split, p.grid), (2, 4, 1, 4096, 256));
        let p = vector_columns_plan(4096, 128, 64, 132, 4);
        assert_eq!((p.lanes, p.tiles, p.splits, p.rows_per_split, p.grid), (4, 4, 1, 4096, 256));
        // Longer walks keep their splits: 64 heads of 32,768 rows, and 8,192 rows at 128 columns.
        assert_eq!(vector_columns_plan(32768, 128, 64, 132, 4).lanes, 16);
        assert!(vector_columns_plan(8192, 128, 64, 132, 4).splits > 1);
        assert_eq!(vector_columns_plan(8192, 64, 64, 132, 4).splits, 1, "2 threads a row: 64 rows each");
        // Not four tiles of 8 · lanes columns (n = 96: three), or past one wave (200 heads).
        assert!(vector_columns_plan(4096, 96, 64, 132, 4).splits > 1);
        assert!(vector_columns_plan(4096, 64, 200, 132, 4).splits > 1);
        // Llama rows: a warp over 256 columns, eight row groups, tiles by n.
        let p = vector_columns_plan(4096, 14336, 1, 132, 2);
        assert_eq!((p.lanes, p.tiles, p.splits), (32, 56, 264 / 56));
        assert_eq!(p.grid, 56 * p.splits);
        // Whole waves of splits: 33 splits of 125 rows would end each thread on 3–4 rows loaded
        // one at a time; 32 splits of 128 rows are four whole passes of the block's eight row
        // groups (32 rows).
        let whole = split_plan(4096, 1, 32, 16, 33);
        assert_eq!((whole.splits, whole.rows_per_split, whole.grid), (32, 128, 512));
        // 14336 × 4096: 33 splits of 435 rows (a tail of 19) → 32 of 448.
        assert_eq!(split_plan(14336, 1, 32, 16, 33).rows_per_split, 448);
        // Those walk 16 and 56 rows a thread: at most 8 splits instead, 16 threads a row so that
        // every SM has a block (128 blocks of 32 threads a row would not).
        for &(m, rows) in [(4096, 512), (14336, 1792)].iter() {
            let p = vector_columns_plan(m, 4096, 1, 132, 4);
            assert_eq!((p.lanes, p.tiles, p.splits, p.rows_per_split, p.grid), (16, 32, 8, rows, 256), "{}", m);
        }
        // Longer walks keep the whole wave: 128256 × 4096 (488 rows a thread), 28672 × 8192.
        let p = vector_columns_plan(128256, 4096, 1, 132, 4);
        assert_eq!((p.lanes, p.splits, p.rows_per_split), (32, 33, 3904));
        assert_eq!(vector_columns_plan(28672, 8192, 1, 132, 4).splits, 16);
        // tests/gpu_gemv_half.rs reaches this plan: 5000 × 2048 at 8 threads a row (16 would
        // give 128 blocks), 8 splits of 640 rows (625 rounded up to whole passes).
        let p = vector_columns_plan(5000, 2048, 1, 132, 4);
        assert_eq!((p.lanes, p.tiles, p.splits, p.rows_per_split), (8, 32, 8, 640));
        // Batches keep theirs: 32 heads of 4,096 × 128, 16 rows a thread in 16 splits.
        assert_eq!(vector_columns_plan(4096, 128, 32, 132, 4).splits, 16);
        // Single matrices around those: every plan covers the rows and columns once, splits keep
        // MIN_SPLIT_ROWS_PER_THREAD rows a thread, and short walks take at most
        // SHORT_WALK_MAX_SPLITS splits, every SM a block.
        let mut short = 0;
        for &m in [1000usize, 1088, 2112, 4096, 5000, 9000, 14336, 33000, 128256].iter() {
            for &n in [1024usize, 2048, 2056, 4096, 8192, 14336].iter() {
                let p = vector_columns_plan(m, n, 1, 132, 4);
                let at = format!("{} x {}: {:?}", m, n, p);
                assert!(p.lanes >= MIN_COLUMN_LANES && p.lanes.is_power_of_two(), "{}", at);
                assert!(p.tiles * 8 * p.lanes >= n && (p.tiles - 1) * 8 * p.lanes < n, "{}", at);
                assert!(p.splits * p.rows_per_split >= m && (p.splits - 1) * p.rows_per_split < m, "{}", at);
                assert_eq!(p.grid, p.tiles * p.splits, "{}", at);
                let pass_rows = (SGEMV_BATCHED_BLOCK as usize / p.lanes) * MIN_SPLIT_ROWS_PER_THREAD;
                assert!(p.splits == 1 || p.rows_per_split >= pass_rows, "{}", at);
                if short_walk_split_plan(m, n, 1, 132, &whole_wave_plan(m, n, 1, 528)).is_some() {
                    assert!(p.splits <= SHORT_WALK_MAX_SPLITS && p.grid > 132, "{}", at);
                    short += 1;
                }
            }
        }
        assert!(short >= 5, "the sweep reaches short walks: {}", short);
        // 4096 × 14336: 9 splits of 456 rows keep their tail of 8, a quarter of a pass, and
        // their whole wave (57 rows a thread, but only 9 splits).
        let p = vector_columns_plan(4096, 14336, 1, 132, 4);
        assert_eq!((p.lanes, p.tiles, p.splits, p.rows_per_split), (32, 56, 9, 456));
        assert!(8 * p.lanes <= SGEMV_BATCHED_BLOCK as usize);
        // Enough tiles alone: one split, no partials.
        assert_eq!(vector_columns_plan(8192, 8, 1000, 132, 4).splits, 1);
        assert_eq!(
            vector_columns_plan(0, 8, 1, 132, 4),
            VectorColumnsPlan { lanes: 1, rows_per_split: 1, splits: 1, tiles: 1, grid: 1 }
        );
    }

    #[test]
    fn misaligned_strided_or_transposed_calls_take_the_scalar_kernel() {
        let s = |op, lda, a_addr, x_addr| shape(op, 100, 64, lda, a_addr, x_addr);
        let single = SgemvLayout::SINGLE;
        let scalar = HalfGemvChoice::Scalar;
        assert_eq!(half_gemv_choice(&s(Op::T, 64, 0, 0), &single, [2, 2, 2]), HalfGemvChoice::VectorColumns);
        assert_eq!(half_gemv_choice(&s(Op::T, 64, 0, 6), &strided_x(3), [2, 2, 2]), HalfGemvChoice::VectorColumns);
        assert_eq!(half_gemv_choice(&s(Op::T, 64, 2, 0), &single, [2, 2, 2]), scalar, "A offset by one");
        assert_eq!(half_gemv_choice(&s(Op::T, 68, 0, 0), &single, [2, 2, 2]), scalar, "lda · 2 not 16k");
        assert_eq!(half_gemv_choice(&shape(Op::T, 100, 60, 64, 0, 0), &single, [2, 2, 2]), scalar, "n % 8");
        assert_eq!(half_gemv_choice(&s(Op::T, 64, 0, 0), &batch(2, 6400 + 4, 100), [2, 2, 2]), scalar, "stride_a");
        assert_eq!(half_gemv_choice(&s(Op::N, 65, 0, 0), &single, [2, 2, 2]), scalar, "odd lda");
        assert_eq!(half_gemv_choice(&s(Op::N, 68, 0, 0), &single, [2, 2, 2]), scalar, "lda · 2 not 16k");
        assert_eq!(half_gemv_choice(&s(Op::N, 64, 2, 0), &single, [2, 2, 2]), scalar, "A offset by one");
        assert_eq!(half_gemv_choice(&s(Op::N, 64, 0, 4), &single, [2, 4, 4]), scalar, "x offset by one");
        let strided = SgemvLayout { incx: 2, ..single };
        assert_eq!(half_gemv_choice(&s(Op::N, 64, 0, 0), &strided, [2, 2, 2]), scalar, "incx");
        assert_eq!(half_gemv_choice(&s(Op::N, 64, 0, 0), &batch(2, 6400 + 4, 64), [2, 2, 2]), scalar, "stride_a");
        assert_eq!(half_gemv_choice(&s(Op::N, 64, 0, 0), &batch(2, 6400, 66), [2, 2, 2]), scalar, "stride_x");
        assert_eq!(half_gemv_choice(&s(Op::N, 64, 0, 0), &batch(2, 6400, 66), [2, 4, 4]), scalar, "f32 stride_x");
        assert_ne!(half_gemv_choice(&s(Op::N, 64, 0, 0), &batch(2, 6400, 64), [2, 4, 4]), scalar);
        // A batch of one ignores its strides; incy does not matter for the loads.
        assert_ne!(half_gemv_choice(&s(Op::N, 64, 0, 0), &batch(1, 3, 3), [2, 2, 2]), scalar);
        let incy = SgemvLayout { incy: 3, ..single };
        assert_ne!(half_gemv_choice(&s(Op::N, 64, 0, 0), &incy, [2, 2, 2]), scalar);
    }

    #[test]
    fn short_rows_walk_shallow_below_two_deep_tiles_per_resident_warp() {
        // 132 SMs with 3 blocks of the `_ns` entries: 3,168 warps, shallow below 6,336 tiles of
        // 32 rows (8 lanes, heads of 64) or 16 rows (16 lanes, heads of 128).
        let walk = |heads: usize, kv: usize, lanes| short_walk(heads * kv, lanes, 132, 3);
        let (deep, shallow) = (RowWalk::Short, RowWalk::ShallowShort);
        // (heads, kv, lanes, walk): the attention scores of data/gemv_shapes.csv.
        let scores = [
            (64, 512, 8, shallow),
            (64, 512, 16, shallow),
            (32, 4096, 8, shallow),
            (32, 4096, 16, deep),
            (64, 4096, 8, deep),
            (64, 4096, 16, deep),
            (32, 32768, 8, deep),
            (64, 32768, 16, deep),
        ];
        for &(heads, kv, lanes, want) in scores.iter() {
            assert_eq!(walk(heads, kv, lanes), want, "{} x {}, {} lanes", heads, kv, lanes);
        }
        // The threshold itself, and rows of 256 halves (32 lanes, tiles of 8 rows).
        assert_eq!(short_walk(6336 * 32 - 32, 8, 132, 3), shallow);
        assert_eq!(short_walk(6336 * 32 - 31, 8, 132, 3), deep, "6,336 tiles, the last partial");
        assert_eq!(short_walk(6336 * 8 - 8, 32, 132, 3), shallow);
        assert_eq!(short_walk(6336 * 8, 32, 132, 3), deep);
        // More resident warps: more rows walk shallow.
        assert_eq!(short_walk(64 * 4096, 8, 132, 4), shallow);
        assert_eq!(short_walk(usize::MAX, 8, u32::MAX, u32::MAX), shallow, "no overflow");
        assert_eq!(short_walk(1 << 15, 8, 0, 3), deep, "no SMs reported: deep");
    }

    #[test]
    fn vector_rows_grid_gives_each_warp_a_tile_up_to_the_resident_blocks() {
        // 8 warps · rows per group · (32 / lanes) groups per block: short rows 8 per group,
        // medium 4, long 1.
        let grid = |batch: usize, m, n, sizes, lanes, blocks| {
            let walk = RowWalk::of_vector_rows(batch * m, n, sizes, lanes);
            vector_rows_grid(batch * m, walk, lanes, 132, blocks)
        };
        assert_eq!(grid(1, 1, 64, [2, 2], 8, 8), 1);
        assert_eq!(grid(1, 128, 64, [2, 2], 8, 8), 1);
        assert_eq!(grid(1, 129, 64, [2, 2], 8, 8), 2);
        assert_eq!(grid(32, 512, 64, [2, 2], 8, 8), 128, "few rows: medium");
        assert_eq!(vector_rows_grid(1 << 16, RowWalk::Short, 8, 132, 8), 256, "short");
        assert_eq!(vector_rows_grid(1 << 16, RowWalk::Short, 16, 132, 8), 512, "short, 16 lanes");
        assert_eq!(grid(1, 1 << 16, 64, [4, 4], 8, 8), 512, "f32: medium");
        assert_eq!(grid(1, 4096, 1024, [2, 2], 32, 8), 128);
        assert_eq!(grid(1, 4096, 4096, [2, 2], 32, 8), 512);
        assert_eq!(grid(1, 128256, 4096, [2, 2], 32, 8), 132 * 8);
        assert_eq!(grid(1, 0, 64, [2, 2], 32, 0), 1);
    }

    #[test]
    fn every_bench_shape_takes_a_vector_kernel_that_fills_an_h100() {
        let csv = include_str!("../../../data/gemv_shapes.csv");
        let rows = csv.lines().filter(|l| !l.starts_with('#') && !l.starts_with("batch"));
        let mut seen = 0;
        for line in rows {
            let v: Vec<usize> = line.split(',').take(3).map(|f| f.parse().expect("a number")).collect();
            let (count, m, n) = (v[0], v[1], v[2]);
            let layout = batch(count, m * n, n);
            let layout = SgemvLayout { batch: SgemvBatch { stride_y: m, ..layout.batch }, ..layout };
            let n_choice = half_gemv_choice(&shape(Op::N, m, n, n, 0, 0), &layout, [2, 2, 2]);
            let (lanes, walk) = match n_choice {
                HalfGemvChoice::VectorRows { lanes, walk } => (lanes, walk),
                other => panic!("{}: Op::N took {:?}", line, other),
            };
            // 132 SMs, 2 blocks each (the vector Op::N kernel's ~100 registers).
            let grid = vector_rows_grid(count * m, walk, lanes, 132, 2);
            assert!(grid >= 128, "{}: Op::N grid {}", line, grid);
            let t = SgemvLayout { batch: SgemvBatch { stride_x: m, stride_y: n, ..layout.batch }, ..layout };
            assert_eq!(half_gemv_choice(&shape(Op::T, m, n, n, 0, 0), &t, [2, 2, 2]), HalfGemvChoice::VectorColumns);
            // 4 blocks per SM (~58 registers).
            let plan = vector_columns_plan(m, n, count, 132, 4);
            let rows_per_thread = plan.rows_per_split / (SGEMV_BATCHED_BLOCK as usize / plan.lanes);
            let few_rows = rows_per_thread < 2 * MIN_SPLIT_ROWS_PER_THREAD;
            assert!(plan.grid >= 132 || few_rows, "{}: Op::T plan {:?}", line, plan);
            assert!(plan.splits == 1 || rows_per_thread >= MIN_SPLIT_ROWS_PER_THREAD, "{}: {:?}", line, plan);
            let pass = SGEMV_BATCHED_ROWS * (SGEMV_BATCHED_BLOCK as usize / plan.lanes);
            assert!(plan.splits == 1 || plan.rows_per_split % pass <= pass / SPLIT_TAIL_PARTS, "{}: {:?}", line, plan);
            assert!(plan.grid <= 132 * 4, "{}: one wave: {:?}", line, plan);
            seen += 1;
        }
        assert_eq!(seen, 18, "the six Llama and twelve attention shapes");
    }
}
