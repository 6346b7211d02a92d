//! Axis reductions without a GPU: the shape and its checks, and `Auto`'s choice of kernel and
//! launch, pure functions of the shape and the device's SM count.
use crate::error::{Error, Result};
use crate::launch::div_ceil;
use kernels::config::{
    AXIS_BLOCK, AXIS_BLOCK_ROW_MIN_BYTES, AXIS_COLUMN_BLOCKS_PER_SM, AXIS_MIN_CHUNK_BYTES, AXIS_MIN_ROWS_PER_THREAD,
    AXIS_SEGMENT_BLOCK, AXIS_SPLIT_BELOW_WARPS_PER_SM, AXIS_SPLIT_WARPS_PER_SM, AXIS_TILE_MIN_BYTES,
    AXIS_VECTOR_COLUMN_BLOCKS_PER_SM, AXIS_VECTOR_MIN_ROWS_PER_THREAD, AXIS_WORD_COLUMN_BLOCKS_PER_SM,
    AXIS_WORD_TRACK_MIN_ROWS, VECTOR_BYTES, WARP_SIZE,
};
use kernels::short_rows::SHORT_ROW_VECTORS;

/// Most partials one column folds (`fold`: 64 per thread, four loads in flight at a time):
/// enough splits for few columns to fill the device (2^20 × 16: 1024 blocks), a fold of a few µs.
pub const AXIS_MAX_CHUNKS: usize = 64 * AXIS_BLOCK as usize;

/// Most pieces of a split row that its last piece folds (`kernels::piece_fold`: one warp, one
/// round of eight loads a lane; 16 × 2^22 f32, 528 pieces a row, ran 2.5% slower folded so than
/// by the fold launch); rows of more pieces are folded by the fold launch.
pub const AXIS_MAX_ROW_PIECES: usize = 8 * WARP_SIZE as usize;

/// Fewest partials a column of `Columns` folds for `Auto` to fold them in the launch instead
/// (`FoldedColumns`): 8192 × 28,672 f32 columns (9 a column) ran 0.2–1.0% slower so in four
/// H200 calls, bf16 (18) 1.1–1.6% faster.
pub const AXIS_TILE_MIN_CHUNKS: usize = 16;

/// Column argmin and argmax of halves by words ([`arg_tile`]): the most blocks per SM of their
/// grid, one wave (a `words` block, 90 registers a thread, leaves room for two). Past one block
/// per SM, fewer splits beat fewer blocks: 8192 × 28,672 bf16 argmax took 114.1 µs in 224 tiles
/// of 16 threads and no split, 131.5 in 14 tiles of 256 threads × 9 splits (H200).
pub const AXIS_WORD_COLUMN_MAX_BLOCKS_PER_SM: usize = 2;

/// Column argmin and argmax of halves by words: the narrowest tile's share of a row, in bytes.
/// Narrow tiles need fewer splits to fill the device: 4096² bf16 argmax took 18.2 µs in 128 tiles
/// of 64 bytes, 18.7 in 32 tiles of 256 bytes × 4 splits, 21.2 in 8 of 1 KiB × 16 (H200).
pub const AXIS_WORD_TILE_MIN_BYTES: usize = 64;

/// Column argmin and argmax of f32 (the `tiles` walk, a vector of columns a thread): the
/// narrowest tile's share of a row, in bytes. At two blocks per SM, narrower tiles need fewer
/// splits: 4096² argmax took 24.6 µs in 128 tiles of 128 bytes × 2 splits, 25.7 in 16 of 1 KiB
/// × 16; 8192² 68.3 in 256 of 128 bytes, 72.7 in 16 of 2 KiB × 16; tiles of 64 bytes lost on
/// 2^20 × 64 (90–91 µs against 72.6) (H200).
pub const AXIS_ARG_TILE_MIN_BYTES: usize = 128;

/// Column argmin and argmax ([`arg_tile`]): the fewest rows a thread walks in one split
/// (`AXIS_VECTOR_MIN_ROWS_PER_THREAD` where split). 32 × 128,256 bf16 argmax
/// took 11.5 µs in 126 tiles of 128 threads, 16 rows a thread, and 9.8 in `Columns`' 63 tiles of
/// 256, 32 rows; 2048 × 4096 took 14.0 in 128 tiles of 4 threads, 32 rows, and 15.2 in 16 tiles
/// of 32 × 8 splits (H200).
pub const AXIS_ARG_TILE_MIN_ROWS: usize = 32;

/// Axis columns folded in their launch (`column_tiles`): the most partials one thread of a
/// column tile's last block folds (columns · splits / `AXIS_BLOCK`), four rounds of eight loads;
/// Auto narrows the tile until its final fold takes no more. 4096² f32 column sums: 31.2 µs in
/// `cols`' 1,024 columns a tile, 264 partials a thread; 25.8 in 512, 64; 22.6 in 256, 16. bf16
/// 16.7 in 512 columns × 16 splits (32 a thread), 15.5 in 256 × 8 (8); f32 8192² 68.1 in
/// 512 × 16 (32), 66.9 in 256 × 8 (8) (H200).
pub const AXIS_TILE_FOLD_PARTIALS: usize = 16;

/// What an axis reduction keeps per lane, as far as `Auto` plans it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AxisFold {
    /// A running value: sum, min, max, minmax.
    Values,
    /// argmin, argmax: the best 16-byte vector's key and position, its element found at the end
    /// of the lane's part of the row by reading that vector again.
    Args,
}

/// A row-major m×n matrix whose row i starts at element i·lda of the buffer (`lda ≥ n`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AxisShape {
    pub m: usize,
    pub n: usize,
    pub lda: usize,
}

impl AxisShape {
    /// m×n with rows packed (lda = n).
    pub fn new(m: usize, n: usize) -> AxisShape {
        AxisShape { m, n, lda: n }
    }

    /// The same shape with row stride `lda`.
    pub fn with_lda(self, lda: usize) -> AxisShape {
        AxisShape { lda, ..self }
    }

    /// Elements the matrix spans, (m − 1)·lda + n (0 when it holds none); `TooLarge` past usize.
    pub fn span(&self) -> Result<usize> {
        if self.m == 0 || self.n == 0 {
            return Ok(0);
        }
        (self.m - 1).checked_mul(self.lda).and_then(|s| s.checked_add(self.n)).ok_or(Error::TooLarge {
            what: "(m - 1)·lda + n",
            len: self.m,
            max: usize::MAX / self.lda.max(1),
        })
    }

    /// `LeadingDimension` (lda < n), `TooLarge` (the span past usize), `LengthMismatch` (an
    /// input of `input_len` elements shorter than the span).
    pub fn check(&self, input_len: usize) -> Result<()> {
        if self.lda < self.n {
            return Err(Error::LeadingDimension { lda: self.lda, n: self.n });
        }
        let span = self.span()?;
        if input_len < span {
            return Err(Error::LengthMismatch { what: "input", expected: span, actual: input_len });
        }
        Ok(())
    }
}

/// Which way a matrix is reduced: each row (m results) or each column (n results).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Axis {
    Rows,
    Columns,
}

impl Axis {
    /// Results of reducing `shape` along this axis.
    pub fn results(self, shape: AxisShape) -> usize {
        match self {
            Axis::Rows => shape.m,
            Axis::Columns => shape.n,
        }
    }

    /// Elements of each line (row or column) of `shape` this axis reduces.
    pub fn line(self, shape: AxisShape) -> usize {
        match self {
            Axis::Rows => shape.n,
            Axis::Columns => shape.m,
        }
    }
}

/// How an axis reduction runs: `Auto` (the default) or a kernel with its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AxisStrategy {
    /// `auto_strategy`'s choice for the shape (a pure function of the shape, the element size and
    /// the SM count).
    Auto,
    /// The `rows` kernel: `lanes` lanes (a power of two ≤ 32) per row, segment or chunk, each
    /// row cut into `chunks` ≥ 1 pieces (more than one adds a launch folding them in order).
    Rows { lanes: u32, chunks: u32 },
    /// The `cols` kernel: column tiles of `tile` threads (a power of two ≤ `AXIS_BLOCK`), each
    /// thread on one column (or on a 16-byte vector of adjacent columns when every row starts
    /// 16-byte aligned) and every (`AXIS_BLOCK` / tile)-th row, rows split into `splits` ≥ 1
    /// ranges (more than one such chunk per column adds the fold).
    Columns { tile: u32, splits: u32 },
    /// The `tiles` kernel (`kernels::column_tiles`; f32, f16 and bf16, every op): `Columns`'
    /// walk, each block folding its phases in shared memory and the last block of each column
    /// tile folding its splits, in one launch.
    FoldedColumns { tile: u32, splits: u32 },
    /// The `short` kernel (`kernels::short_rows`; f32, f16 and bf16, every op): a thread per
    /// row, its first `SHORT_ROW_VECTORS` 16-byte vectors loaded together and folded in its
    /// registers, the rest element by element. Rows must start 16-byte aligned.
    ShortRows,
}

impl Default for AxisStrategy {
    fn default() -> Self {
        AxisStrategy::Auto
    }
}

/// Columns one thread of the `cols` kernel walks over a matrix of `elem`-byte elements at
/// device address `addr` with row stride `lda`: a 16-byte vector of them when every row starts
/// 16-byte aligned (`addr` and lda·elem multiples of 16) and n fills one, else one. The kernels'
/// `width` argument.
pub fn column_width(elem: usize, addr: u64, shape: AxisShape) -> u32 {
    let per_vec = VECTOR_BYTES / elem.max(1);
    if rows_aligned(elem, addr, shape) && elem <= VECTOR_BYTES && shape.n >= per_vec {
        per_vec as u32
    } else {
        1
    }
}

/// Whether every row of `shape` (`elem`-byte elements at device address `addr`) starts 16-byte
/// aligned: `addr` and lda·elem multiples of 16.
pub fn rows_aligned(elem: usize, addr: u64, shape: AxisShape) -> bool {
    addr % VECTOR_BYTES as u64 == 0 && (shape.lda % VECTOR_BYTES) * elem % VECTOR_BYTES == 0
}

/// Whether an arg op over the columns of `type_name` with the resolved `strategy`, `width`
/// columns a thread, runs the `words` kernel instead of `cols` (or `word_tiles` instead of
/// `tiles` for `FoldedColumns`): types of
/// `kernels::axis_arg::AXIS_ARG_WORD_TYPES`, a 16-byte vector of columns per thread, and
/// threads that walk `AXIS_WORD_TRACK_MIN_ROWS` rows or more in splits of at most
/// `WORD_SPLIT_MAX_ROWS` rows.
pub fn column_word_tracks(type_name: &str, shape: AxisShape, strategy: AxisStrategy, width: u32) -> bool {
    let (tile, splits) = match strategy {
        AxisStrategy::Columns { tile, splits } | AxisStrategy::FoldedColumns { tile, splits } => {
            (tile as usize, splits as usize)
        }
        _ => return false,
    };
    let per = div_ceil(shape.m, splits.max(1));
    let phases = AXIS_BLOCK as usize / tile.max(1);
    word_columns(type_name, AxisFold::Args, width)
        && per / phases.max(1) >= AXIS_WORD_TRACK_MIN_ROWS
        && per <= kernels::axis_arg::WORD_SPLIT_MAX_ROWS
}

/// Pieces of a row that takes a whole block: a warp each ([`kernels::axis::folds_in_block`]).
const BLOCK_ROW_PIECES: usize = (AXIS_BLOCK / WARP_SIZE) as usize;

/// Elements of this size keep a warp per row for arg ops at any row length, not a block: with a
/// block each warp has a few batches of a row and then reads its best vector of eight elements
/// again. bf16 argmax over rows of 16–112 KiB took 7–37% less time so on an H200 and 1–19% on
/// an H100 (f32, four elements a vector: the GPUs disagree, and a block stays; tuning log,
/// session 27).
const ARG_WARP_ROW_ELEM: usize = 2;

/// 16-byte vectors per lane of the `rows` kernel: one batch of loads in flight, and fewer
/// shuffle levels per row than a lane per vector.
const VECTORS_PER_LANE: usize = 4;

/// 16-byte vectors per lane of the `rows` arg kernels: four batches, so that a lane's read-back
/// of its best vector and the group's shuffles of (key, vector) pairs pay for more of the row.
/// Rows of 64 to 1,024 f32 and bf16 ran 7–33% faster so than at `VECTORS_PER_LANE` on an H200
/// (tuning log, session 37).
const ARG_VECTORS_PER_LANE: usize = 16;

/// Lanes for items of `bytes` reduced as `fold`: a thread for a row of one vector at most (the
/// kernel's element-by-element path), else a lane per `VECTORS_PER_LANE` vectors (values) or
/// `ARG_VECTORS_PER_LANE` (args), a power of two from 2 up to a warp.
pub fn lanes_for(bytes: usize, fold: AxisFold) -> u32 {
    let vectors = div_ceil(bytes.max(1), VECTOR_BYTES);
    if vectors <= 1 {
        return 1;
    }
    let per_lane = match fold {
        AxisFold::Values => VECTORS_PER_LANE,
        AxisFold::Args => ARG_VECTORS_PER_LANE,
    };
    div_ceil(vectors, per_lane).next_power_of_two().clamp(2, WARP_SIZE as usize) as u32
}

/// `Auto`'s dispatch for reducing `shape` of `elem` -byte elements along `axis` as `fold` on a
/// device of `sm_count` SMs, columns `width` ([`column_width`]) per thread of the `cols` kernel,
/// first match:
///
/// | case | strategy |
/// |---|---|
/// | columns of a one-column, packed matrix (lda = 1: contiguous) | as the one row of m elements |
/// | columns of a one-row matrix | as the rows of a packed n×1 matrix (a row per column) |
/// | columns | `Columns`: tile = ⌈n / width⌉'s power of two up to `AXIS_BLOCK`; rows split up to `AXIS_COLUMN_BLOCKS_PER_SM` (width 1) or `AXIS_VECTOR_COLUMN_BLOCKS_PER_SM` blocks per SM (rounded down; argmin and argmax of halves in `folded_columns`' own tiles and splits), each thread ≥ `AXIS_MIN_ROWS_PER_THREAD` (width 1) or `AXIS_VECTOR_MIN_ROWS_PER_THREAD` rows, ≤ `AXIS_MAX_CHUNKS` chunks |
/// | rows | `Rows`: a thread per row of one 16-byte vector at most, else a lane per `VECTORS_PER_LANE` vectors, from 2 up to a warp (arg ops: per `ARG_VECTORS_PER_LANE` where m times those lanes fills `AXIS_SPLIT_BELOW_WARPS_PER_SM` warps per SM); a warp's rows are split when m < `AXIS_SPLIT_BELOW_WARPS_PER_SM` per SM, toward `AXIS_SPLIT_WARPS_PER_SM` warps per SM, chunks ≥ `AXIS_MIN_CHUNK_BYTES`; other rows of `AXIS_BLOCK_ROW_MIN_BYTES` or more take a block each (`BLOCK_ROW_PIECES` pieces, folded in the block), but arg ops on elements of `ARG_WARP_ROW_ELEM` bytes keep a warp |
///
/// Returns the shape the kernel sees (transposed for the contiguous column) and the strategy.
/// A call then runs `Columns` of f32, f16 and bf16 as [`folded_columns`] says, and their short
/// aligned `Rows` as [`short_rows`] says.
/// Where that shape is one row of n ≥ 1 elements, the call runs instead as the whole-buffer
/// reduction of the row (its fast path streams one long row faster than split chunks and their
/// fold), except arg ops with u32 indices, which it does not write.
pub fn auto_strategy(
    axis: Axis,
    shape: AxisShape,
    elem: usize,
    fold: AxisFold,
    width: u32,
    sm_count: u32,
) -> (AxisShape, AxisStrategy) {
    let sm = sm_count.max(1) as usize;
    if axis == Axis::Columns && one_element_rows(shape) {
        return auto_strategy(Axis::Rows, AxisShape::new(1, shape.m), elem, fold, 1, sm_count);
    }
    if axis == Axis::Columns && shape.m == 1 {
        // One row: column j is element j alone, the j-th row of a packed n×1 matrix.
        return auto_strategy(Axis::Rows, AxisShape::new(shape.n, 1), elem, fold, 1, sm_count);
    }
    if axis == Axis::Columns {
        let threads = div_ceil(shape.n.max(1), width.max(1) as usize);
        let tile = threads.next_power_of_two().clamp(1, AXIS_BLOCK as usize);
        return (shape, columns(shape, tile as u32, width, sm, false));
    }
    let row_bytes = shape.n * elem;
    let lanes = lanes_for(row_bytes, AxisFold::Values);
    // Arg ops take their wider lanes where the groups still hold as many warps per SM as whole
    // rows need (`AXIS_SPLIT_BELOW_WARPS_PER_SM`).
    let arg_lanes = lanes_for(row_bytes, fold);
    let filled = shape.m * arg_lanes as usize >= sm * AXIS_SPLIT_BELOW_WARPS_PER_SM * WARP_SIZE as usize;
    let lanes = if arg_lanes < lanes && filled { arg_lanes } else { lanes };
    let mut chunks = 1;
    if lanes == WARP_SIZE && shape.m < sm * AXIS_SPLIT_BELOW_WARPS_PER_SM {
        let want = div_ceil(sm * AXIS_SPLIT_WARPS_PER_SM, shape.m.max(1));
        chunks = want.min(row_bytes / AXIS_MIN_CHUNK_BYTES).clamp(1, AXIS_MAX_CHUNKS);
    } else if lanes == WARP_SIZE
        && row_bytes >= AXIS_BLOCK_ROW_MIN_BYTES
        && !(fold == AxisFold::Args && elem == ARG_WARP_ROW_ELEM)
    {
        chunks = BLOCK_ROW_PIECES;
    }
    (shape, AxisStrategy::Rows { lanes, chunks: chunks as u32 })
}

/// Row splits of a column walk over `shape` in tiles of `tile` threads of `width` columns on
/// `sm` SMs: toward `AXIS_COLUMN_BLOCKS_PER_SM` (width 1) or `AXIS_VECTOR_COLUMN_BLOCKS_PER_SM`
/// blocks per SM, rounded down, each thread walking at least `AXIS_MIN_ROWS_PER_THREAD` (width
/// 1) or `AXIS_VECTOR_MIN_ROWS_PER_THREAD` rows (0 when it cannot).
///
/// With `words` (the `words` walk, vectors only), toward `AXIS_WORD_COLUMN_BLOCKS_PER_SM` blocks
/// per SM instead.
fn column_splits(shape: AxisShape, tile: usize, width: u32, sm: usize, words: bool) -> usize {
    let tiles = div_ceil(div_ceil(shape.n.max(1), width.max(1) as usize), tile);
    let phases = AXIS_BLOCK as usize / tile;
    let (per_sm, min_rows) = match (width > 1, words) {
        (true, true) => (AXIS_WORD_COLUMN_BLOCKS_PER_SM, AXIS_VECTOR_MIN_ROWS_PER_THREAD),
        (true, false) => (AXIS_VECTOR_COLUMN_BLOCKS_PER_SM, AXIS_VECTOR_MIN_ROWS_PER_THREAD),
        _ => (AXIS_COLUMN_BLOCKS_PER_SM, AXIS_MIN_ROWS_PER_THREAD),
    };
    // Rounded down: a grid past per_sm blocks per SM leaves some SMs one block more, whose
    // blocks (argmax's are bound by their instructions) finish a block's time later.
    let want = (sm * per_sm / tiles).max(1);
    want.min(shape.m / (phases * min_rows))
}

/// `Columns` in tiles of `tile` threads, split by [`column_splits`] into at most `AXIS_MAX_CHUNKS`
/// chunks a column and at least one split.
fn columns(shape: AxisShape, tile: u32, width: u32, sm: usize, words: bool) -> AxisStrategy {
    let phases = AXIS_BLOCK as usize / tile.max(1) as usize;
    let splits = column_splits(shape, tile as usize, width, sm, words).min(AXIS_MAX_CHUNKS / phases).max(1);
    AxisStrategy::Columns { tile, splits: splits as u32 }
}

/// Whether columns of `type_name` reduced as `fold`, `width` columns a thread, go through the
/// `words` walk where their threads walk enough rows ([`column_word_tracks`]): arg ops of
/// `kernels::axis_arg::AXIS_ARG_WORD_TYPES` over 16-byte vectors of columns.
fn word_columns(type_name: &str, fold: AxisFold, width: u32) -> bool {
    fold == AxisFold::Args && width > 1 && kernels::axis_arg::AXIS_ARG_WORD_TYPES.contains(&type_name)
}

/// Where [`arg_tile`] looks: blocks per SM it splits toward (rounded to the nearest), the most
/// per SM it keeps, and the narrowest tile's share of a row in bytes.
#[derive(Clone, Copy)]
struct ArgTiles {
    per_sm: usize,
    most_per_sm: usize,
    min_bytes: usize,
}

/// Argmin and argmax of halves by words: a block per SM (90 registers a thread).
const WORD_TILES: ArgTiles =
    ArgTiles { per_sm: 1, most_per_sm: AXIS_WORD_COLUMN_MAX_BLOCKS_PER_SM, min_bytes: AXIS_WORD_TILE_MIN_BYTES };

/// Argmin and argmax of f32 by `tiles`: `AXIS_VECTOR_COLUMN_BLOCKS_PER_SM`, no more.
const TYPED_ARG_TILES: ArgTiles = ArgTiles {
    per_sm: AXIS_VECTOR_COLUMN_BLOCKS_PER_SM,
    most_per_sm: AXIS_VECTOR_COLUMN_BLOCKS_PER_SM,
    min_bytes: AXIS_ARG_TILE_MIN_BYTES,
};

/// The tile and splits of a column argmin or argmax over `shape`, `width` columns a thread, from
/// `cols`' tile `widest` on `sm` SMs: of the power-of-two tiles from `widest` down to
/// `policy.min_bytes` of a row, each split into about `policy.per_sm` blocks per SM (splits
/// rounded to the nearest, at least one), those that fill the device in one wave (from 95% of
/// that to `policy.most_per_sm` blocks per SM) with threads of `AXIS_ARG_TILE_MIN_ROWS` rows or
/// more (`AXIS_VECTOR_MIN_ROWS_PER_THREAD` where split): the fewest splits, then the widest
/// tile. `None` when no tile qualifies.
fn arg_tile(shape: AxisShape, widest: u32, width: u32, sm: usize, policy: ArgTiles) -> Option<(u32, usize)> {
    let threads = div_ceil(shape.n.max(1), width.max(1) as usize);
    let target = sm * policy.per_sm;
    let mut best: Option<(u32, usize)> = None;
    let mut tile = widest.max(1);
    // A thread's share of a row is one 16-byte vector.
    while tile as usize * VECTOR_BYTES >= policy.min_bytes {
        let (tiles, phases) = (div_ceil(threads, tile as usize), AXIS_BLOCK as usize / tile as usize);
        let splits = ((2 * target + tiles) / (2 * tiles)).clamp(1, AXIS_MAX_CHUNKS / phases);
        let blocks = tiles * splits;
        let rows = shape.m / (splits * phases);
        let min_rows = if splits > 1 { AXIS_VECTOR_MIN_ROWS_PER_THREAD } else { AXIS_ARG_TILE_MIN_ROWS };
        let fills = blocks * 20 >= target * 19 && blocks <= sm * policy.most_per_sm;
        let walks = rows >= min_rows && div_ceil(shape.m, splits) <= kernels::axis_arg::WORD_SPLIT_MAX_ROWS;
        if fills && walks && best.map_or(true, |(_, fewest)| splits < fewest) {
            best = Some((tile, splits));
        }
        tile /= 2;
    }
    best
}

/// `Auto`'s columns of `type_name` (`elem` bytes) reduced as `fold`, given Auto's resolved
/// `strategy`:
/// - argmin and argmax over vectors of columns of a type with `tiles` entries
///   (`kernels::column_tiles::AXIS_TILE_TYPES`): `FoldedColumns` in the tile and splits of
///   [`arg_tile`], a block per SM for the `words` walk of halves ([`word_columns`]), two for the
///   others; where no tile qualifies, the `words` walk takes `strategy`'s tile split toward
///   `AXIS_WORD_COLUMN_BLOCKS_PER_SM` blocks per SM;
/// - where `Columns` would then add the fold launch (`AXIS_TILE_MIN_CHUNKS` or more partials a
///   column) over a type with `tiles` entries, `FoldedColumns` instead: the `words` walk in its
///   own tile; the others in the widest tile (up to `Columns`' own) whose last blocks fold at
///   most `AXIS_TILE_FOLD_PARTIALS` partials a thread, but no narrower than
///   `AXIS_TILE_MIN_BYTES` of a row, splits as `Columns` sets them.
///
/// Any other strategy is returned as it is.
pub fn folded_columns(
    type_name: &str,
    elem: usize,
    fold: AxisFold,
    shape: AxisShape,
    width: u32,
    sm_count: u32,
    strategy: AxisStrategy,
) -> AxisStrategy {
    let (sm, words) = (sm_count.max(1) as usize, word_columns(type_name, fold, width));
    let tiles = kernels::column_tiles::AXIS_TILE_TYPES.contains(&type_name);
    // Whether the tile and splits are set (by `arg_tile`, or the `words` walk's fallback), and
    // the fewest partials a column folds in the launch.
    let (strategy, set, min_chunks) = match strategy {
        AxisStrategy::Columns { tile, .. } if tiles && fold == AxisFold::Args && width > 1 => {
            let policy = if words { WORD_TILES } else { TYPED_ARG_TILES };
            match arg_tile(shape, tile, width, sm, policy) {
                // The `words` walk folds even two partials a column in its launch.
                Some((tile, splits)) => {
                    let planned = AxisStrategy::Columns { tile, splits: splits as u32 };
                    (planned, true, if words { 2 } else { AXIS_TILE_MIN_CHUNKS })
                }
                None if words => (columns(shape, tile, width, sm, true), true, AXIS_TILE_MIN_CHUNKS),
                None => (strategy, false, AXIS_TILE_MIN_CHUNKS),
            }
        }
        _ => (strategy, false, AXIS_TILE_MIN_CHUNKS),
    };
    let tile = match (strategy, fold_plan(shape, strategy)) {
        (AxisStrategy::Columns { tile, .. }, Some(f)) if tiles && f.chunks >= min_chunks => tile as usize,
        _ => return strategy,
    };
    if let (true, AxisStrategy::Columns { tile, splits }) = (set, strategy) {
        return AxisStrategy::FoldedColumns { tile, splits };
    }
    let row_bytes = |tile: usize| tile * width.max(1) as usize * elem;
    // Not the `words` walk here: it returned above.
    let splits = |tile: usize| column_splits(shape, tile, width, sm, false).max(1);
    let mut tile = tile;
    while tile > 1
        && row_bytes(tile / 2) >= AXIS_TILE_MIN_BYTES
        && tile * width.max(1) as usize * splits(tile) > AXIS_TILE_FOLD_PARTIALS * AXIS_BLOCK as usize
    {
        tile /= 2;
    }
    AxisStrategy::FoldedColumns { tile: tile as u32, splits: splits(tile) as u32 }
}

/// 16-byte vectors of the longest rows `Auto` gives arg ops a thread each ([`short_rows`]):
/// past the four a `short` thread holds, it reads the rest element by element, and at five or
/// six vectors that still beats `Rows`, whose two lanes read the part of a row past a whole
/// batch one vector at a time. argmax over f32 rows of 80 and 96 bytes and bf16 rows of 80 took
/// 26–32% less time, bf16 rows of 96 bytes 8% less; at 112 bytes, f32 3% less and bf16 27% more
/// (H200, tuning log, session 38).
const SHORT_ARG_ROW_VECTORS: usize = 6;

/// `Auto`'s rows of `type_name` (`elem` bytes) reduced as `fold`, given Auto's resolved
/// `strategy`: rows that `Rows` gives a group of lanes (more than one 16-byte vector) without
/// splitting them, of at most `SHORT_ROW_VECTORS` vectors (`SHORT_ARG_ROW_VECTORS` for arg
/// ops), 16-byte aligned (`width` > 1: [`column_width`]), over a type with `short` entries
/// (`kernels::short_rows::SHORT_ROW_TYPES`), take `ShortRows`. Any other strategy is returned as
/// it is.
pub fn short_rows(
    type_name: &str,
    elem: usize,
    fold: AxisFold,
    shape: AxisShape,
    width: u32,
    strategy: AxisStrategy,
) -> AxisStrategy {
    let grouped = matches!(strategy, AxisStrategy::Rows { lanes, chunks: 1 } if lanes > 1);
    let most = match fold {
        AxisFold::Values => SHORT_ROW_VECTORS,
        AxisFold::Args => SHORT_ARG_ROW_VECTORS,
    };
    let short = shape.n * elem <= most * VECTOR_BYTES;
    if grouped && short && width > 1 && kernels::short_rows::SHORT_ROW_TYPES.contains(&type_name) {
        AxisStrategy::ShortRows
    } else {
        strategy
    }
}

/// `strategy` for `axis` and `shape` (of `elem`-byte elements, reduced as `fold`), `Auto`
/// resolved: the shape the kernel sees and a named
/// strategy. `Unsupported` for parameters out of range, or a kernel of the other axis (but a
/// contiguous column, lda = n = 1, is a row, and the columns of one row are rows of one element).
pub fn resolve(
    axis: Axis,
    shape: AxisShape,
    elem: usize,
    fold: AxisFold,
    width: u32,
    sm_count: u32,
    strategy: AxisStrategy,
) -> Result<(AxisShape, AxisStrategy)> {
    let bad = |what: &str| Err(Error::Unsupported { what: format!("{:?} for {:?}: {}", strategy, axis, what) });
    match strategy {
        AxisStrategy::Auto => Ok(auto_strategy(axis, shape, elem, fold, width, sm_count)),
        AxisStrategy::Rows { lanes, chunks } => {
            if !lanes.is_power_of_two() || lanes > WARP_SIZE || chunks == 0 {
                return bad("lanes must be a power of two ≤ 32 and chunks ≥ 1");
            }
            match axis {
                Axis::Rows => Ok((shape, strategy)),
                Axis::Columns if one_element_rows(shape) => Ok((AxisShape::new(1, shape.m), strategy)),
                Axis::Columns if shape.m == 1 => Ok((AxisShape::new(shape.n, 1), strategy)),
                Axis::Columns => bad("rows kernels take columns only of a contiguous one-column or a one-row matrix"),
            }
        }
        AxisStrategy::Columns { tile, splits } | AxisStrategy::FoldedColumns { tile, splits } => {
            if !tile.is_power_of_two() || tile > AXIS_BLOCK || splits == 0 {
                return bad("tile must be a power of two ≤ AXIS_BLOCK and splits ≥ 1");
            }
            if axis == Axis::Rows {
                return bad("a columns kernel reduces columns");
            }
            Ok((shape, strategy))
        }
        AxisStrategy::ShortRows => match axis {
            Axis::Rows => Ok((shape, strategy)),
            Axis::Columns => bad("a rows kernel reduces rows"),
        },
    }
}

/// The partials of split results: `items` results of `chunks` partials each, item i's chunk k
/// at `i·item_stride + k·chunk_stride`, folded by each row's last piece (rows) or by a second
/// launch (columns).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FoldPlan {
    pub items: usize,
    pub chunks: usize,
    pub item_stride: usize,
    pub chunk_stride: usize,
    /// Each row's last piece folds them in the first launch (split rows of at most
    /// [`AXIS_MAX_ROW_PIECES`] pieces), not the fold launch.
    pub by_last_piece: bool,
}

/// The partials a resolved strategy folds over `shape` (None when each result is written whole).
pub fn fold_plan(shape: AxisShape, strategy: AxisStrategy) -> Option<FoldPlan> {
    let (items, chunks, rows) = match strategy {
        AxisStrategy::Rows { lanes, chunks } if kernels::axis::folds_in_block(lanes, chunks) => return None,
        AxisStrategy::Rows { chunks, .. } => (shape.m, chunks as usize, true),
        AxisStrategy::Columns { tile, splits } => (shape.n, splits as usize * (AXIS_BLOCK / tile) as usize, false),
        AxisStrategy::FoldedColumns { .. } | AxisStrategy::ShortRows | AxisStrategy::Auto => return None,
    };
    let by_last_piece = rows && chunks <= AXIS_MAX_ROW_PIECES;
    (chunks > 1).then(|| FoldPlan { items, chunks, item_stride: chunks, chunk_stride: 1, by_last_piece })
}

/// Blocks of the fold launch: a group of `kernels::axis::fold_lanes(chunks)` lanes per item
/// (capped at `max_grid`; the kernel strides over the rest).
pub fn fold_grid(fold: &FoldPlan, max_grid: u32) -> u32 {
    let per_block = (AXIS_BLOCK / kernels::axis::fold_lanes(fold.chunks)).max(1) as usize;
    div_ceil(fold.items, per_block).clamp(1, max_grid as usize) as u32
}

/// Threads per block of the first launch: `AXIS_SEGMENT_BLOCK` over segments (a block holds its
/// SM slot until its longest segment is done), else `AXIS_BLOCK`.
pub fn first_block(segments: bool) -> u32 {
    if segments {
        AXIS_SEGMENT_BLOCK
    } else {
        AXIS_BLOCK
    }
}

/// Whether argmin and argmax of `m` segments a warp each (`Rows` of a warp's lanes, one chunk)
/// launch the `segments` kernel (`kernels::axis_arg`), whose warps take a segment each without
/// a grid stride: its grid of [`first_block`]`(true)`-thread blocks must hold them all within
/// `max_grid` blocks. Else they take the `rows` kernel.
pub fn segment_warps_fit(m: usize, max_grid: u32) -> bool {
    div_ceil(m, (first_block(true) / WARP_SIZE) as usize) <= max_grid as usize
}

/// Whether `shape`'s rows are one element each, stored contiguously (n = lda = 1): its one
/// column is contiguous too.
pub fn one_element_rows(shape: AxisShape) -> bool {
    shape.n == 1 && shape.lda == 1
}

/// Blocks of the first launch: groups of `lanes` over `items` in blocks of
/// [`first_block`]`(segments)` threads (capped at `max_grid`; the kernel strides over the rest),
/// a thread per row (`ShortRows`, capped likewise), or every (column tile of `width`-column
/// threads, split) pair (`TooLarge` past `max_grid`). Contiguous one-element rows take
/// `ROWS_PER_THREAD` loads a thread of `width` rows each.
pub fn first_grid(shape: AxisShape, strategy: AxisStrategy, width: u32, segments: bool, max_grid: u32) -> Result<u32> {
    match strategy {
        AxisStrategy::Rows { lanes, chunks } => {
            let mut per_block = (first_block(segments) / lanes) as usize;
            if lanes == 1 && chunks == 1 && one_element_rows(shape) {
                // Contiguous one-element rows: several per thread (`width` at a time), their loads
                // in flight together.
                per_block *= kernels::axis::ROWS_PER_THREAD * width.max(1) as usize;
            }
            Ok(div_ceil(shape.m * chunks as usize, per_block).clamp(1, max_grid as usize) as u32)
        }
        AxisStrategy::ShortRows => Ok(div_ceil(shape.m, AXIS_BLOCK as usize).clamp(1, max_grid as usize) as u32),
        AxisStrategy::Columns { tile, splits } | AxisStrategy::FoldedColumns { tile, splits } => {
            crate::launch::check_grid(div_ceil(shape.n, (tile * width.max(1)) as usize) * splits as usize, max_grid)
        }
        AxisStrategy::Auto => unreachable!("resolved before planning"),
    }
}
