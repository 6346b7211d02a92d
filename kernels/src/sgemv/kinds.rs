//! What an sgemv kernel is, as the host sees it: the product it computes, how it is launched
//! and what alignment it needs. Compiled for the host too; the table of every kernel, and the
//! lookups in it, are in the module above.
use crate::config::{
    SGEMV_BATCHED_BLOCK, SGEMV_BATCHED_T_BLOCK, SGEMV_BLOCK, SGEMV_ROW_BLOCK, SGEMV_SPLIT_BLOCK, SGEMV_STAGED_BLOCK,
    SGEMV_T_BLOCK, SGEMV_T_STREAM_BLOCK, SGEMV_WIDE_BLOCK,
};

/// Which product: `N` is y = alpha·A·x + beta·y (x has n entries, y m); `T` is
/// y = alpha·Aᵀ·x + beta·y (x has m entries, y n), a column-major caller's `N`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    N,
    T,
}

impl Default for Op {
    fn default() -> Self {
        Op::N
    }
}

/// Which sgemv kernel runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SgemvKernel {
    /// Picks by shape and alignment (the host's dispatch table).
    Auto,
    /// n ≤ 32: one warp per row, one column per lane.
    N32,
    /// n ≤ 128, n % 4 == 0: one warp per row, one float4 per lane (aligned A and x, lda % 4 == 0).
    N128,
    /// `rows` ∈ {2, 4, 8} rows per warp, n ≤ 32 / rows: segmented shuffle reduction.
    RowsPerWarp(u32),
    /// n ≤ `SGEMV_STAGED_MAX_N`, any alignment: a block stages a tile of rows (one span of A)
    /// in shared memory with float4 loads; a thread per row. For rows float4 loads cannot take.
    StagedRows,
    /// `cols` ∈ {4, 8, 16, 32, 64}: one float4 per lane, cols / 4 lanes per row, n ≤ cols,
    /// n % 4 == 0 (aligned A and x, lda % 4 == 0).
    Vec4Rows(u32),
    /// Any n, any alignment: one warp per row, scalar loads.
    WarpScalar,
    /// Any n: one warp per row, float4 loads (aligned A and x, lda % 4 == 0).
    WarpVec4,
    /// Any n: one block per row, for wide matrices with few rows.
    BlockPerRow,
    /// Any n: a warp per four rows, two float4s of each row in flight (aligned A and x, lda % 4 == 0).
    WarpRowsVec4,
    /// Any n, any alignment: `WarpRowsVec4` with scalar loads.
    WarpRowsScalar,
    /// Split-K for few wide rows: a block per row chunk, float4 loads, the row's last block
    /// folds the chunks in order (aligned A and x, lda % 4 == 0).
    SplitKVec4,
    /// Any alignment: `SplitKVec4` with scalar loads.
    SplitKScalar,
    /// Any alignment: `SplitKVec4` reading A with aligned float4 loads from each chunk's first
    /// float4 and shifting x's aligned quads into place; the chunk's ragged ends float by float.
    SplitKShifted,
    /// Few very wide rows: a block per (column tile, row group), each thread eight columns of
    /// x in registers and eight loads in flight over four rows; the group's last block folds
    /// the tiles in order (aligned A and x, lda % 4 == 0, n % 4 == 0).
    WideVec4,
    /// [`Op::T`]: column tiles × row splits, float4 loads (aligned A, lda % 4 == 0, n % 4 == 0).
    TVec4,
    /// [`Op::T`], any alignment: `TVec4` with scalar loads.
    TScalar,
    /// [`Op::T`], any alignment: a lane per column, so each warp load is one coalesced 32-float
    /// stripe of a row, with `depth` ∈ {8, 16, 32} rows in flight per thread; 32-column tiles ×
    /// row splits as `TVec4`.
    TStripes(u32),
    /// [`Op::T`] for wide matrices: each thread owns `SGEMV_T_STREAM_VECS` float4 columns and
    /// walks every row (no row split, no partials) (aligned A, lda % 4 == 0, n % 4 == 0).
    TStreamVec4,
    /// [`Op::T`], any alignment: `TStreamVec4` with scalar loads.
    TStreamScalar,
    /// Strided batches and incx/incy, any alignment: a warp per (problem, row), scalar loads.
    BatchedN,
    /// [`Op::T`], strided batches and incx/incy, any alignment: a block per (problem,
    /// 32-column tile), a lane per column, the block's warps over the rows.
    BatchedT,
}

impl Default for SgemvKernel {
    fn default() -> Self {
        SgemvKernel::Auto
    }
}

/// How the host launches a kernel. It fixes the entry point's arguments after
/// `(a, x, m, n, lda, alpha, beta, y)`, its block size and the product it computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SgemvLaunch {
    /// Persistent warps over tiles of `SGEMV_ROW_UNROLL` steps of this many rows; no extra
    /// arguments.
    RowTiles(u32),
    /// A block per row, blocks striding over rows; no extra arguments.
    BlockPerRow,
    /// Blocks over tiles of rows staged in shared memory; no extra arguments.
    StagedRows,
    /// Row chunks: `chunk` (columns), then partials and counters.
    SplitK,
    /// Column tiles × row groups: `rows` (per group), then partials and counters.
    WideRows,
    /// `Op::T`, column tiles × row splits: `lanes` (per row), `rows_per_split`, partials, counters.
    Transposed,
    /// `Op::T`, 32-column stripes × row splits: `rows_per_split`, `shift`, partials, counters.
    Stripes,
    /// `Op::T`, column tiles walking every row; no extra arguments.
    Stream,
    /// Warps over (problem, row): `incx`, `incy`, `stride_a`, `stride_x`, `stride_y`, `batch`.
    BatchedRows,
    /// `Op::T`, blocks over (problem, column tile): the arguments of `BatchedRows`.
    BatchedColumns,
}

impl SgemvLaunch {
    /// The product such kernels compute.
    pub const fn op(self) -> Op {
        match self {
            SgemvLaunch::Transposed | SgemvLaunch::Stripes | SgemvLaunch::Stream | SgemvLaunch::BatchedColumns => Op::T,
            _ => Op::N,
        }
    }

    /// Threads per block.
    pub const fn block(self) -> u32 {
        match self {
            SgemvLaunch::RowTiles(_) => SGEMV_BLOCK,
            SgemvLaunch::BlockPerRow => SGEMV_ROW_BLOCK,
            SgemvLaunch::StagedRows => SGEMV_STAGED_BLOCK,
            SgemvLaunch::SplitK => SGEMV_SPLIT_BLOCK,
            SgemvLaunch::WideRows => SGEMV_WIDE_BLOCK,
            SgemvLaunch::Transposed | SgemvLaunch::Stripes => SGEMV_T_BLOCK,
            SgemvLaunch::Stream => SGEMV_T_STREAM_BLOCK,
            SgemvLaunch::BatchedRows => SGEMV_BATCHED_BLOCK,
            SgemvLaunch::BatchedColumns => SGEMV_BATCHED_T_BLOCK,
        }
    }

    /// Whether it takes batch strides and incx/incy (and so runs any [`crate::sgemv`] layout).
    pub const fn batched(self) -> bool {
        matches!(self, SgemvLaunch::BatchedRows | SgemvLaunch::BatchedColumns)
    }

    /// Whether blocks share output tiles (partials and counters follow the extra arguments).
    pub const fn takes_partials(self) -> bool {
        matches!(self, SgemvLaunch::SplitK | SgemvLaunch::WideRows | SgemvLaunch::Transposed | SgemvLaunch::Stripes)
    }
}

/// How a kernel reads A (and x for `Op::N`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loads {
    /// Any alignment.
    Scalar,
    /// float4 loads: A (and x for `Op::N`) 16-byte aligned, lda % 4 == 0.
    Vec4,
}

/// One sgemv entry point: the kernel the host names, its PTX name, how it is launched and how
/// it loads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SgemvEntry {
    pub kernel: SgemvKernel,
    pub name: &'static str,
    pub launch: SgemvLaunch,
    pub loads: Loads,
}
