//! sgemv: `y = alpha · op(A) x + beta · y`, A row-major m×n with leading dimension `lda`,
//! op(A) = A ([`Op::N`]) or Aᵀ ([`Op::T`]).
use crate::entries::sgemv_entry;
use crate::error::{Error, Result};
use crate::gpu::{GpuStream, KernelArgs};
use crate::launch::{check_grid, div_ceil, resident_blocks};
use cust::memory::DeviceSlice;
use kernels::config::{
    sgemv_staged_rows, sgemv_wide_stride, SGEMV_BLOCK, SGEMV_ENTRIES, SGEMV_ROWS_PER_WARP, SGEMV_ROW_BLOCK,
    SGEMV_ROW_UNROLL, SGEMV_SPLIT_BLOCK, SGEMV_SPLIT_WAVES, SGEMV_STAGED_BLOCK, SGEMV_STAGED_MAX_GAP,
    SGEMV_STAGED_MAX_N, SGEMV_T_BLOCK, SGEMV_T_MAX_LANES, SGEMV_T_ROWS_PER_THREAD, SGEMV_T_STREAM_BLOCK,
    SGEMV_T_STREAM_N, SGEMV_T_STREAM_VECS, SGEMV_T_STRIPES_MIN_N, SGEMV_T_STRIPE_DEPTHS, SGEMV_T_WAVES,
    SGEMV_VEC4_COLS, SGEMV_WIDE_BLOCK, SGEMV_WIDE_MIN_M, SGEMV_WIDE_N, SGEMV_WIDE_ROWS, SGEMV_WIDE_ROWS_N,
    SGEMV_WIDE_TILE, SGEMV_WIDE_WAVES, VECTOR_BYTES, VECTOR_UNROLL, WARP_SIZE,
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
    /// Picks by n and alignment (see [`SgemvKernel::choose`]).
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
}

impl Default for SgemvKernel {
    fn default() -> Self {
        SgemvKernel::Auto
    }
}

/// Options of [`GpuStream::sgemv`]; the defaults are cuBLAS's: alpha 1, beta 0, lda = n, `Auto`,
/// `Op::N`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SgemvOptions {
    pub alpha: f32,
    pub beta: f32,
    /// Leading dimension (elements between row starts); `None` means n.
    pub lda: Option<usize>,
    pub kernel: SgemvKernel,
    pub op: Op,
}

impl Default for SgemvOptions {
    fn default() -> Self {
        SgemvOptions { alpha: 1.0, beta: 0.0, lda: None, kernel: SgemvKernel::Auto, op: Op::N }
    }
}

/// The shape and addresses of one sgemv call: what dispatch and validation look at.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SgemvShape {
    pub op: Op,
    pub m: usize,
    pub n: usize,
    pub lda: usize,
    pub a_addr: u64,
    pub x_addr: u64,
}

impl SgemvShape {
    /// A and x 16-byte aligned and every row start too (lda % 4 == 0).
    pub fn vector_aligned(&self) -> bool {
        let a = VECTOR_BYTES as u64;
        self.a_addr % a == 0 && self.x_addr % a == 0 && self.lda % 4 == 0
    }

    /// A 16-byte aligned, lda and n multiples of 4: every row is whole float4s (x aside).
    pub fn rows_aligned(&self) -> bool {
        self.a_addr % VECTOR_BYTES as u64 == 0 && self.lda % 4 == 0 && self.n % 4 == 0
    }

    /// `TStripes`: columns its first tile starts before column 0, so that every stripe is one
    /// aligned 128-byte line; nonzero only when every row starts equally misaligned (lda a
    /// multiple of 32, A 4-byte aligned).
    pub fn stripes_shift(&self) -> usize {
        let line = WARP_SIZE as u64;
        if self.lda % line as usize == 0 && self.a_addr % 4 == 0 {
            ((self.a_addr / 4) % line) as usize
        } else {
            0
        }
    }

    /// `TStripes`: its 32-column tiles.
    pub fn stripes_tiles(&self) -> usize {
        div_ceil(self.n + self.stripes_shift(), WARP_SIZE as usize)
    }

    /// Entries of y: m for `Op::N`, n for `Op::T`.
    pub fn out_len(&self) -> usize {
        match self.op {
            Op::N => self.m,
            Op::T => self.n,
        }
    }
}

/// How a kernel is launched: entry point, block and grid, and for the split kernels the split
/// count and their one extra size argument (split-K: columns per chunk; transposed: lanes per
/// row and rows per split).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SgemvPlan {
    pub name: &'static str,
    pub block: u32,
    pub grid: u32,
    /// Blocks sharing one tile of outputs (wide rows: the column tiles rounded up to a multiple
    /// of 4, the partials' row stride); above 1 the kernel needs partials and counters.
    pub splits: usize,
    /// Output tiles (split-K: rows; wide rows: row groups; transposed: column tiles): the
    /// counters needed.
    pub tiles: usize,
    /// Split-K: `[chunk]`; wide rows: `[rows]`; transposed: `[lanes, rows_per_split]`;
    /// otherwise empty.
    pub args: Vec<usize>,
}

impl SgemvKernel {
    /// Every kernel that can be named (all but `Auto`).
    pub const EXPLICIT: [SgemvKernel; 27] = [
        SgemvKernel::N32,
        SgemvKernel::N128,
        SgemvKernel::RowsPerWarp(2),
        SgemvKernel::RowsPerWarp(4),
        SgemvKernel::RowsPerWarp(8),
        SgemvKernel::StagedRows,
        SgemvKernel::Vec4Rows(4),
        SgemvKernel::Vec4Rows(8),
        SgemvKernel::Vec4Rows(16),
        SgemvKernel::Vec4Rows(32),
        SgemvKernel::Vec4Rows(64),
        SgemvKernel::WarpScalar,
        SgemvKernel::WarpVec4,
        SgemvKernel::BlockPerRow,
        SgemvKernel::WarpRowsVec4,
        SgemvKernel::WarpRowsScalar,
        SgemvKernel::SplitKVec4,
        SgemvKernel::SplitKScalar,
        SgemvKernel::SplitKShifted,
        SgemvKernel::WideVec4,
        SgemvKernel::TVec4,
        SgemvKernel::TScalar,
        SgemvKernel::TStripes(8),
        SgemvKernel::TStripes(16),
        SgemvKernel::TStripes(32),
        SgemvKernel::TStreamVec4,
        SgemvKernel::TStreamScalar,
    ];

    /// The dispatch table of `Auto`, first match, before the device has its say
    /// ([`SgemvKernel::stripes_depth`]). `Op::T`: n ≥ `SGEMV_T_STREAM_N` streams (`TStreamVec4`
    /// when A's rows are float4 aligned: A 16-byte aligned, lda and n multiples of 4; else
    /// `TStreamScalar`), n ≥ `SGEMV_T_STRIPES_MIN_N` takes `TStripes` (deepest), narrower n
    /// `TVec4` or `TScalar` by the same test. `Op::N`, by n:
    ///
    /// | n | float4 (A, x aligned, lda % 4 == 0) | otherwise |
    /// |---|---|---|
    /// | ≤ 64, n % 4 == 0 | `Vec4Rows(c)`, smallest c ≥ n | (by n below) |
    /// | ≤ 128, n % 4 == 0 | `N128` | (by n below) |
    /// | 1 to 32, lda - n < `SGEMV_STAGED_MAX_GAP` | `StagedRows` | same |
    /// | ≤ 4, ≤ 8, ≤ 16 | `RowsPerWarp(8, 4, 2)` | same |
    /// | ≤ 32 | `N32` | same |
    /// | < `SGEMV_WIDE_N` | `WarpRowsVec4` | `WarpRowsScalar` |
    /// | < `SGEMV_WIDE_ROWS_N` | `SplitKVec4` | `SplitKShifted` |
    /// | ≥ `SGEMV_WIDE_ROWS_N`, m ≥ `SGEMV_WIDE_MIN_M` | `WideVec4` | `SplitKShifted` |
    pub fn choose(shape: &SgemvShape) -> SgemvKernel {
        let n = shape.n;
        let vec = shape.vector_aligned();
        if shape.op == Op::T {
            return match (n >= SGEMV_T_STREAM_N, shape.rows_aligned()) {
                (true, true) => SgemvKernel::TStreamVec4,
                (true, false) => SgemvKernel::TStreamScalar,
                _ if n >= SGEMV_T_STRIPES_MIN_N => SgemvKernel::TStripes(SGEMV_T_STRIPE_DEPTHS[2]),
                (false, true) => SgemvKernel::TVec4,
                (false, false) => SgemvKernel::TScalar,
            };
        }
        let float4_rows = n > 0 && n % 4 == 0 && vec;
        match n {
            _ if float4_rows && n <= 64 => {
                SgemvKernel::Vec4Rows(*SGEMV_VEC4_COLS.iter().find(|&&c| n <= c as usize).expect("n ≤ 64"))
            }
            _ if float4_rows && n <= 128 => SgemvKernel::N128,
            1..=SGEMV_STAGED_MAX_N if shape.lda - n < SGEMV_STAGED_MAX_GAP => SgemvKernel::StagedRows,
            0..=4 => SgemvKernel::RowsPerWarp(8),
            5..=8 => SgemvKernel::RowsPerWarp(4),
            9..=16 => SgemvKernel::RowsPerWarp(2),
            17..=32 => SgemvKernel::N32,
            _ if float4_rows && n >= SGEMV_WIDE_ROWS_N && shape.m >= SGEMV_WIDE_MIN_M => SgemvKernel::WideVec4,
            _ if n >= SGEMV_WIDE_N && vec => SgemvKernel::SplitKVec4,
            _ if n >= SGEMV_WIDE_N => SgemvKernel::SplitKShifted,
            _ if vec => SgemvKernel::WarpRowsVec4,
            _ => SgemvKernel::WarpRowsScalar,
        }
    }

    /// The depth of `TStripes` for `tiles` column tiles: the deepest whose resident blocks
    /// (`slots[i]` for `SGEMV_T_STRIPE_DEPTHS[i]`, one wave) hold every tile; None when none
    /// does. 4096²: 128 tiles take depth 32 at one block per SM, 22.3 µs against 23.1 at 16 and
    /// `TVec4`'s 25.2; 8192²: 256 tiles, depth 16 67.7 against 69.0 at 32 (H200, 2026-11-22).
    pub fn stripes_depth(tiles: usize, slots: &[usize]) -> Option<u32> {
        SGEMV_T_STRIPE_DEPTHS.iter().zip(slots).rev().find(|&(_, &s)| tiles <= s).map(|(&d, _)| d)
    }

    /// The product this kernel computes.
    pub fn op(self) -> Op {
        match self {
            SgemvKernel::TVec4
            | SgemvKernel::TScalar
            | SgemvKernel::TStripes(_)
            | SgemvKernel::TStreamVec4
            | SgemvKernel::TStreamScalar => Op::T,
            _ => Op::N,
        }
    }

    /// Checks that this (non-`Auto`) kernel handles `shape`.
    pub fn validate(self, shape: &SgemvShape) -> Result<()> {
        let unsupported = |what: String| Err(Error::Unsupported { what });
        let needs_alignment = self.vector_loads();
        if self.op() != shape.op {
            return unsupported(format!("{:?} computes Op::{:?}, not Op::{:?}", self, self.op(), shape.op));
        }
        match self {
            SgemvKernel::TVec4 | SgemvKernel::TStreamVec4 | SgemvKernel::WideVec4 if shape.n % 4 != 0 => {
                return unsupported(format!("{:?} with n = {} (needs n % 4 == 0)", self, shape.n))
            }
            SgemvKernel::N32 if shape.n > 32 => return unsupported(format!("N32 with n = {} > 32", shape.n)),
            SgemvKernel::StagedRows if shape.n > SGEMV_STAGED_MAX_N => {
                return unsupported(format!("StagedRows with n = {} > {}", shape.n, SGEMV_STAGED_MAX_N))
            }
            SgemvKernel::N128 if shape.n > 128 || shape.n % 4 != 0 => {
                return unsupported(format!("N128 with n = {} (needs n ≤ 128, n % 4 == 0)", shape.n))
            }
            SgemvKernel::RowsPerWarp(r) if !SGEMV_ROWS_PER_WARP.contains(&r) => {
                return unsupported(format!("{} rows per warp (built for {:?})", r, SGEMV_ROWS_PER_WARP))
            }
            SgemvKernel::RowsPerWarp(r) if shape.n > (WARP_SIZE / r) as usize => {
                return unsupported(format!("{} rows per warp with n = {} > {}", r, shape.n, WARP_SIZE / r))
            }
            SgemvKernel::TStripes(d) if !SGEMV_T_STRIPE_DEPTHS.contains(&d) => {
                return unsupported(format!("TStripes({}) (built for depths {:?})", d, SGEMV_T_STRIPE_DEPTHS))
            }
            SgemvKernel::Vec4Rows(c) if !SGEMV_VEC4_COLS.contains(&c) => {
                return unsupported(format!("Vec4Rows({}) (built for {:?} columns)", c, SGEMV_VEC4_COLS))
            }
            SgemvKernel::Vec4Rows(c) if shape.n > c as usize || shape.n % 4 != 0 => {
                return unsupported(format!("Vec4Rows({}) with n = {} (needs n ≤ {}, n % 4 == 0)", c, shape.n, c))
            }
            _ => {}
        }
        if needs_alignment {
            let required = VECTOR_BYTES;
            if shape.a_addr % required as u64 != 0 {
                return Err(Error::Misaligned { what: "A", required, address: shape.a_addr });
            }
            if shape.op == Op::N && shape.x_addr % required as u64 != 0 {
                return Err(Error::Misaligned { what: "x", required, address: shape.x_addr });
            }
            if shape.lda % 4 != 0 {
                return unsupported(format!("{:?} with lda = {} (needs lda % 4 == 0)", self, shape.lda));
            }
        }
        Ok(())
    }

    /// Whether this kernel uses float4 loads (needs aligned A and x, lda % 4 == 0).
    pub fn vector_loads(self) -> bool {
        matches!(
            self,
            SgemvKernel::N128
                | SgemvKernel::WarpVec4
                | SgemvKernel::Vec4Rows(_)
                | SgemvKernel::WarpRowsVec4
                | SgemvKernel::SplitKVec4
                | SgemvKernel::WideVec4
                | SgemvKernel::TVec4
                | SgemvKernel::TStreamVec4
        )
    }

    /// Rows one warp covers per tile (`SGEMV_ROW_UNROLL` steps); 0 for `BlockPerRow`.
    pub fn rows_per_warp_tile(self) -> usize {
        let k = SGEMV_ROW_UNROLL as usize;
        match self {
            SgemvKernel::RowsPerWarp(r) => k * r as usize,
            SgemvKernel::Vec4Rows(c) => k * (4 * WARP_SIZE / c.max(1)) as usize,
            SgemvKernel::BlockPerRow => 0,
            _ => k,
        }
    }

    /// Position in [`SgemvKernel::EXPLICIT`] and `kernels::config::SGEMV_ENTRIES` (not `Auto`).
    pub fn index(self) -> usize {
        SgemvKernel::EXPLICIT.iter().position(|&k| k == self).expect("an explicit sgemv kernel")
    }

    /// The kernel's entry point in the PTX.
    pub fn entry_point(self) -> &'static str {
        SGEMV_ENTRIES[self.index()]
    }

    /// Threads per block it is launched with.
    pub fn block(self) -> u32 {
        match self {
            SgemvKernel::SplitKVec4 | SgemvKernel::SplitKScalar | SgemvKernel::SplitKShifted => SGEMV_SPLIT_BLOCK,
            SgemvKernel::WideVec4 => SGEMV_WIDE_BLOCK,
            SgemvKernel::TVec4 | SgemvKernel::TScalar | SgemvKernel::TStripes(_) => SGEMV_T_BLOCK,
            SgemvKernel::TStreamVec4 | SgemvKernel::TStreamScalar => SGEMV_T_STREAM_BLOCK,
            SgemvKernel::BlockPerRow => SGEMV_ROW_BLOCK,
            SgemvKernel::StagedRows => SGEMV_STAGED_BLOCK,
            _ => SGEMV_BLOCK,
        }
    }

    /// Whether the kernel is launched only through [`SgemvKernel::plan`]: the split kernels, the
    /// streaming transposed ones (a grid of column tiles) and the staged one (of row tiles).
    pub fn splits_blocks(self) -> bool {
        matches!(
            self,
            SgemvKernel::StagedRows
                | SgemvKernel::SplitKVec4
                | SgemvKernel::SplitKScalar
                | SgemvKernel::SplitKShifted
                | SgemvKernel::WideVec4
                | SgemvKernel::TVec4
                | SgemvKernel::TScalar
                | SgemvKernel::TStripes(_)
                | SgemvKernel::TStreamVec4
                | SgemvKernel::TStreamScalar
        )
    }

    /// Entry point, threads per block and blocks for `m` rows: enough blocks for every warp
    /// to get a tile, at most `resident_blocks` (warps then stride over further tiles). Block
    /// per row: one block per row up to `resident_blocks` (blocks then stride over rows). Not
    /// for the split kernels (see [`SgemvKernel::plan`]).
    pub fn launch_config(self, m: usize, resident_blocks: u32) -> (&'static str, u32, u32) {
        assert!(!self.splits_blocks(), "{:?} is launched through plan()", self);
        let name = self.entry_point();
        let cap = resident_blocks.max(1) as usize;
        if self == SgemvKernel::BlockPerRow {
            return (name, SGEMV_ROW_BLOCK, m.clamp(1, cap) as u32);
        }
        let rows_per_block = (SGEMV_BLOCK / WARP_SIZE) as usize * self.rows_per_warp_tile();
        let blocks = ((m + rows_per_block - 1) / rows_per_block).clamp(1, cap);
        (name, SGEMV_BLOCK, blocks as u32)
    }

    /// The launch of this (non-`Auto`) kernel for `shape` on a device with `sm_count` SMs that
    /// each keep `max_threads_per_sm` of its threads resident. Split-K splits rows into chunks
    /// of at least four float4s per thread until the grid has `SGEMV_SPLIT_WAVES` blocks per
    /// resident slot; wide rows cut n into tiles of `8 · SGEMV_WIDE_BLOCK` columns and group
    /// rows by fours (4 to `SGEMV_WIDE_ROWS` per block) so that the grid has about `SGEMV_WIDE_WAVES`
    /// blocks per slot; transposed takes the fewest lanes per row (≤ `SGEMV_T_MAX_LANES`)
    /// covering n / 4, more when m is small (`SGEMV_T_ROWS_PER_THREAD`), and splits rows (≥ four
    /// per thread) until the grid has `SGEMV_T_WAVES` blocks per slot. Streaming transposed: a
    /// block per column tile (`4 · SGEMV_T_STREAM_VECS` columns per thread), at most the resident
    /// blocks (blocks then stride over tiles).
    pub fn plan(self, shape: &SgemvShape, sm_count: u32, max_threads_per_sm: u32) -> Result<SgemvPlan> {
        let (m, n) = (shape.m, shape.n);
        let fits = |what: &'static str, grid: usize| {
            check_grid(grid.max(1), u32::MAX).map_err(|_| Error::TooLarge { what, len: grid, max: u32::MAX as usize })
        };
        let name = self.entry_point();
        let plan =
            |name: &'static str, block, grid, splits, tiles, args| SgemvPlan { name, block, grid, splits, tiles, args };
        match self {
            SgemvKernel::SplitKVec4 | SgemvKernel::SplitKScalar | SgemvKernel::SplitKShifted => {
                let block = SGEMV_SPLIT_BLOCK;
                let target = (resident_blocks(block, sm_count, max_threads_per_sm) * SGEMV_SPLIT_WAVES) as usize;
                let min_chunk = 4 * (VECTOR_UNROLL * block) as usize;
                let splits = (target / m.max(1)).clamp(1, (n / min_chunk).max(1));
                let chunk = (div_ceil(n.max(1), splits) + 3) / 4 * 4;
                let splits = div_ceil(n.max(1), chunk);
                let grid = fits("m · splits (split-K grid)", m * splits)?;
                Ok(plan(name, block, grid, splits, m, vec![chunk]))
            }
            SgemvKernel::WideVec4 => {
                let block = SGEMV_WIDE_BLOCK;
                let tiles = div_ceil(n.max(1), SGEMV_WIDE_TILE);
                let target = (resident_blocks(block, sm_count, max_threads_per_sm) * SGEMV_WIDE_WAVES) as usize;
                let rows = (div_ceil(m, (target / tiles).max(1)) + 3) / 4 * 4;
                let rows = rows.clamp(4, SGEMV_WIDE_ROWS);
                let groups = div_ceil(m, rows);
                let grid = fits("row groups · column tiles (wide-rows grid)", groups * tiles)?;
                let splits = if tiles > 1 { sgemv_wide_stride(tiles) } else { 1 };
                Ok(plan(name, block, grid, splits, groups, vec![rows]))
            }
            SgemvKernel::TVec4 | SgemvKernel::TScalar => {
                let block = SGEMV_T_BLOCK;
                // Lanes per row: enough for n / 4 (≤ SGEMV_T_MAX_LANES), more when rows are too
                // few for the block's row groups (a tile of at most one float4 per thread).
                let by_n = div_ceil(n.max(1), 4).next_power_of_two().min(SGEMV_T_MAX_LANES as usize);
                let by_m =
                    (SGEMV_T_ROWS_PER_THREAD * block as usize / m.max(1)).next_power_of_two().min(block as usize / 4);
                let lanes = by_n.max(by_m).min(div_ceil(n.max(1), 4).next_power_of_two());
                let tiles = div_ceil(n.max(1), 4 * lanes);
                let groups = block as usize / lanes;
                let target = (resident_blocks(block, sm_count, max_threads_per_sm) * SGEMV_T_WAVES) as usize;
                let splits = (target / tiles).clamp(1, div_ceil(m, 4 * groups).max(1));
                let rows_per_split = div_ceil(m, splits).max(1);
                let splits = div_ceil(m, rows_per_split).max(1);
                let grid = fits("column tiles · splits (transposed grid)", tiles * splits)?;
                Ok(plan(name, block, grid, splits, tiles, vec![lanes, rows_per_split]))
            }
            SgemvKernel::TStripes(depth) => {
                let block = SGEMV_T_BLOCK;
                let warps = (block / WARP_SIZE) as usize;
                let tiles = shape.stripes_tiles().max(1);
                let target = (resident_blocks(block, sm_count, max_threads_per_sm) * SGEMV_T_WAVES) as usize;
                // Every warp gets at least one full batch of rows per split.
                let splits = (target / tiles).clamp(1, (m / (depth as usize * warps)).max(1));
                let rows_per_split = div_ceil(m, splits).max(1);
                let splits = div_ceil(m, rows_per_split).max(1);
                let grid = fits("column tiles · splits (transposed grid)", tiles * splits)?;
                Ok(plan(name, block, grid, splits, tiles, vec![rows_per_split, shape.stripes_shift()]))
            }
            SgemvKernel::StagedRows => {
                let block = SGEMV_STAGED_BLOCK;
                let tiles = div_ceil(m.max(1), sgemv_staged_rows(n, shape.lda));
                let resident = resident_blocks(block, sm_count, max_threads_per_sm).max(1) as usize;
                // As many blocks as give every block the same count of tiles (the last maybe
                // fewer), at most the resident ones: no tail of single late tiles.
                let grid = div_ceil(tiles, div_ceil(tiles, resident));
                Ok(plan(name, block, grid as u32, 1, 0, Vec::new()))
            }
            SgemvKernel::TStreamVec4 | SgemvKernel::TStreamScalar => {
                let block = SGEMV_T_STREAM_BLOCK;
                let tiles = div_ceil(n.max(1), 4 * (SGEMV_T_STREAM_VECS * block) as usize);
                let grid = tiles.min(resident_blocks(block, sm_count, max_threads_per_sm) as usize);
                Ok(plan(name, block, grid as u32, 1, 0, Vec::new()))
            }
            _ => {
                let resident = resident_blocks(SGEMV_BLOCK, sm_count, max_threads_per_sm);
                let (name, block, grid) = self.launch_config(m, resident);
                Ok(plan(name, block, grid, 1, 0, Vec::new()))
            }
        }
    }
}

/// Checks lengths and `lda` of an `Op::N` sgemv call; returns the shape.
pub fn validate_sgemv(
    m: usize,
    n: usize,
    lda: usize,
    a: (u64, usize),
    x: (u64, usize),
    y_len: usize,
) -> Result<SgemvShape> {
    validate_sgemv_op(Op::N, m, n, lda, a, x, y_len)
}

/// Checks lengths and `lda` of an sgemv call of either op (x: n entries for `N`, m for `T`;
/// y the other); returns the shape.
pub fn validate_sgemv_op(
    op: Op,
    m: usize,
    n: usize,
    lda: usize,
    a: (u64, usize),
    x: (u64, usize),
    y_len: usize,
) -> Result<SgemvShape> {
    let (x_len, out_len) = if op == Op::N { (n, m) } else { (m, n) };
    if lda < n {
        return Err(Error::LeadingDimension { lda, n });
    }
    // (m - 1)·lda + n, which only an absurd shape overflows (no slice is that long).
    let a_needed = if m == 0 { Some(0) } else { (m - 1).checked_mul(lda).and_then(|e| e.checked_add(n)) };
    let a_needed = a_needed.ok_or(Error::TooLarge { what: "(m - 1) * lda + n", len: usize::MAX, max: a.1 })?;
    if a.1 < a_needed {
        return Err(Error::LengthMismatch { what: "A", expected: a_needed, actual: a.1 });
    }
    if x.1 != x_len {
        return Err(Error::LengthMismatch { what: "x", expected: x_len, actual: x.1 });
    }
    if y_len != out_len {
        return Err(Error::LengthMismatch { what: "y", expected: out_len, actual: y_len });
    }
    Ok(SgemvShape { op, m, n, lda, a_addr: a.0, x_addr: x.0 })
}

impl GpuStream {
    /// The kernel `Auto` runs for `shape` on this device: [`SgemvKernel::choose`], with the depth
    /// of `TStripes` from the blocks of each depth the device keeps resident. Tiles past every
    /// depth's one wave take `TVec4` where rows are float4 aligned (16384²: 247.5 µs against
    /// 253.1 at depth 16, H200), else depth 16.
    pub fn sgemv_auto(&self, shape: &SgemvShape) -> Result<SgemvKernel> {
        let kernel = SgemvKernel::choose(shape);
        if let SgemvKernel::TStripes(_) = kernel {
            let mut slots = [0usize; SGEMV_T_STRIPE_DEPTHS.len()];
            for (s, &d) in slots.iter_mut().zip(SGEMV_T_STRIPE_DEPTHS.iter()) {
                let entry = sgemv_entry(SgemvKernel::TStripes(d).index());
                *s = (self.blocks_per_sm(entry, SGEMV_T_BLOCK)? * self.sm_count()) as usize;
            }
            return Ok(match SgemvKernel::stripes_depth(shape.stripes_tiles(), &slots) {
                Some(depth) => SgemvKernel::TStripes(depth),
                None if shape.rows_aligned() => SgemvKernel::TVec4,
                None => SgemvKernel::TStripes(SGEMV_T_STRIPE_DEPTHS[1]),
            });
        }
        Ok(kernel)
    }

    /// The launch of `kernel` (not `Auto`) for `shape` on this device, planned with the threads
    /// the device really keeps resident.
    pub fn sgemv_plan(&self, kernel: SgemvKernel, shape: &SgemvShape) -> Result<SgemvPlan> {
        let resident_threads = self.resident_threads(sgemv_entry(kernel.index()), kernel.block())?;
        kernel.plan(shape, self.sm_count(), resident_threads)
    }

    /// Enqueues `y = alpha · op(A) x + beta · y` (A row-major m×n, `opts.lda` ≥ n; `opts.op`)
    /// without waiting. An empty y does nothing; an empty sum (n = 0 for `N`, m = 0 for `T`)
    /// gives `y = beta * y`. With beta = 0, y is not read.
    /// Errors: `LengthMismatch` (A shorter than (m-1)·lda+n; x or y not n and m as `op`
    /// says), `LeadingDimension`, `Unsupported`/`Misaligned` for a named kernel that cannot
    /// take the input, `TooLarge`.
    pub fn sgemv(
        &self,
        m: usize,
        n: usize,
        a: &DeviceSlice<f32>,
        x: &DeviceSlice<f32>,
        y: &mut DeviceSlice<f32>,
        opts: SgemvOptions,
    ) -> Result<()> {
        let lda = opts.lda.unwrap_or(n);
        let (a_raw, x_raw) = (crate::gpu::raw(a), crate::gpu::raw(x));
        let shape = validate_sgemv_op(opts.op, m, n, lda, a_raw, x_raw, y.len())?;
        if shape.out_len() == 0 {
            return Ok(());
        }
        let kernel = match opts.kernel {
            SgemvKernel::Auto => self.sgemv_auto(&shape)?,
            k => k,
        };
        kernel.validate(&shape)?;
        let entry = sgemv_entry(kernel.index());
        let plan = self.sgemv_plan(kernel, &shape)?;
        let grid = check_grid(plan.grid as usize, self.max_grid_x())?;
        let mut q = self.lock()?;
        let y_ptr = y.as_device_ptr().as_raw();
        // Split kernels also take partials per (split, output) and a zeroed counter per tile,
        // allocated only with several splits (the kernels touch neither otherwise).
        let (partials, counters) = if plan.splits > 1 {
            (q.partials(4 * plan.splits * shape.out_len())?, q.flagged_slots(div_ceil(plan.tiles, 2))?)
        } else {
            (0, 0)
        };
        let mut args = KernelArgs::new();
        args.slice(a).slice(x).usize(m).usize(n).usize(lda).f32(opts.alpha).f32(opts.beta).ptr(y_ptr);
        for &extra in &plan.args {
            args.usize(extra);
        }
        if plan.tiles > 0 {
            args.ptr(partials).ptr(counters);
        }
        // SAFETY: the entry takes (a: &[f32], x: &[f32], m, n, lda: usize, alpha, beta: f32,
        // y: *mut f32), then its plan's `args` as usizes and, where it has tiles, partials and
        // counters (kernels/src/sgemv/mod.rs). `validate_sgemv_op` checked the lengths of A, x
        // and y, `kernel.validate` the alignment and sizes the kernel needs; `plan` gives its
        // block and grid, and with several splits the partials (`splits` per output) and
        // zeroed counters (one u32 per tile) from this stream's locked scratch; with one split
        // both are 0, which the kernels do not touch.
        unsafe { q.launch(entry, grid, plan.block, &args) }
    }
}
