//! Tuning constants and launch conventions shared by kernels and host. The host reads them
//! from here; nothing in this file is repeated on the host side.

/// Architectures (10 · major + minor) the PTX is assembled to SASS cubins for, by `build.rs`
/// with `from-source`; committed in `kernels/images/`. Other devices JIT-compile the PTX.
pub const SASS_ARCHES: [u32; 4] = [80, 86, 89, 90];

/// Threads in a warp.
pub const WARP_SIZE: u32 = 32;
/// Largest block any kernel is launched with; static shared arrays are sized for it.
pub const MAX_BLOCK: u32 = 1024;
/// Block sizes the reduction ladder is instantiated for (const generics, one entry point each).
pub const LADDER_BLOCKS: [u32; 4] = [128, 256, 512, 1024];

/// Bytes one vector load moves (`ld.global.nc.v4.u32`).
pub const VECTOR_BYTES: usize = 16;
/// Vector loads each thread keeps in flight per iteration in the vectorized kernels.
pub const VECTOR_UNROLL: u32 = 4;
/// The fast path (`Auto` sums and the typed reductions): (input bytes up to, threads per
/// block, 16-byte vectors per thread until the grid reaches the resident blocks), first
/// matching row. Smaller blocks shorten the launch and the tail on small inputs; 1024-thread
/// blocks stream best on large ones. Measured on an H200 at 2^20, 2^24 and 2^28 f32
/// (BENCHMARKS.md, fast-path tuning).
pub const FAST_LAUNCH: [(usize, u32, u32); 3] = [(8 << 20, 256, 4), (64 << 20, 512, 4), (usize::MAX, 1024, 4)];
/// Block size of the second-pass kernel that folds per-block partials.
pub const FINISH_BLOCK: u32 = 1024;

/// How a reduction kernel combines the result of each block (`mode` argument).
pub mod finish {
    /// Block `b` writes its value to `partials[b]`; a second pass or the host folds them.
    pub const PARTIALS: u32 = 0;
    /// Every block atomically adds its value into `out[0]` (not deterministic for floats).
    pub const ATOMIC: u32 = 1;
    /// Blocks write partials; the last block to finish (atomic ticket on `counter`) folds them
    /// in a fixed order and writes `out[0]`: one launch, deterministic. Resets `counter` to 0.
    pub const LAST_BLOCK: u32 = 2;
    /// Every block stores its value with a ready flag in one 64-bit slot of `partials`; the
    /// grid's last block waits for every flag, folds the slots in block order into `out[0]`
    /// and clears them: one launch, deterministic, no ticket and no fence. 32-bit values only;
    /// the slots must be zero before the launch (the kernel leaves them zero).
    pub const FLAGGED: u32 = 3;
}

/// Steps of the reduction ladder, in order; entry points are `reduce_{step}_{type}_b{block}`.
pub const LADDER_STEPS: [&str; 11] = [
    "interleaved_divergent",
    "interleaved_mask",
    "interleaved_strided",
    "sequential",
    "first_add",
    "unrolled_warp",
    "complete_unroll",
    "global_stride",
    "local_stride",
    "warp_shuffle",
    "vectorized",
];
/// Element types the ladder is instantiated for.
pub const LADDER_TYPES: [&str; 2] = ["f32", "i32"];

/// Operations of the typed reductions; entry points are `{op}_{type}`, plus `sum_f32_f64acc`.
pub const TYPED_OPS: [&str; 4] = ["sum", "min", "max", "minmax"];
/// Element types of the typed reductions.
pub const TYPED_TYPES: [&str; 8] = ["u8", "i8", "u16", "i16", "i32", "u32", "f32", "f64"];

/// Threads per block of every sgemv kernel except block-per-row.
pub const SGEMV_BLOCK: u32 = 256;
/// Threads per block of the block-per-row sgemv kernel.
pub const SGEMV_ROW_BLOCK: u32 = 256;
/// Rows per warp of the segmented kernels (n ≤ 32 / rows): `sgemv_rows{R}`.
pub const SGEMV_ROWS_PER_WARP: [u32; 3] = [2, 4, 8];
/// Column counts of the float4 rows-per-warp kernels `sgemv_vec4_n{cols}` (n ≤ cols, n % 4 == 0):
/// cols / 4 lanes per row, 128 / cols rows per warp step. 128 is `sgemv_n128`.
pub const SGEMV_VEC4_COLS: [u32; 5] = [4, 8, 16, 32, 64];
/// sgemv entry points, in the order of the host's `SgemvKernel::EXPLICIT`.
pub const SGEMV_ENTRIES: [&str; 27] = [
    "sgemv_n32",
    "sgemv_n128",
    "sgemv_rows2",
    "sgemv_rows4",
    "sgemv_rows8",
    "sgemv_staged_rows",
    "sgemv_vec4_n4",
    "sgemv_vec4_n8",
    "sgemv_vec4_n16",
    "sgemv_vec4_n32",
    "sgemv_vec4_n64",
    "sgemv_warp_scalar",
    "sgemv_warp_vec4",
    "sgemv_block_per_row",
    "sgemv_warp_rows_vec4",
    "sgemv_warp_rows_scalar",
    "sgemv_split_k_vec4",
    "sgemv_split_k_scalar",
    "sgemv_split_k_shifted",
    "sgemv_wide_vec4",
    "sgemv_t_vec4",
    "sgemv_t_scalar",
    "sgemv_t_stripes8",
    "sgemv_t_stripes16",
    "sgemv_t_stripes32",
    "sgemv_t_stream_vec4",
    "sgemv_t_stream_scalar",
];
/// Row groups in one warp's tile, with all their loads issued before any reduction.
pub const SGEMV_ROW_UNROLL: u32 = 4;

/// Threads per block of the staged narrow-rows kernel (`sgemv_staged_rows`).
pub const SGEMV_STAGED_BLOCK: u32 = 256;
/// Floats of A in one staged tile: `VECTOR_UNROLL` float4s per thread.
pub const SGEMV_STAGED_FLOATS: usize = 4 * (VECTOR_UNROLL * SGEMV_STAGED_BLOCK) as usize;
/// Widest rows the staged kernel takes (x waits in shared memory).
pub const SGEMV_STAGED_MAX_N: usize = 32;
/// `Op::N` with n ≤ `SGEMV_STAGED_MAX_N` whose rows float4 loads cannot take is staged when the
/// gap between rows (lda - n) is narrower than this many floats: one 32-byte DRAM sector, which
/// the row-by-row kernels fetch anyway.
pub const SGEMV_STAGED_MAX_GAP: usize = 8;
/// Staged rows: rows per tile, the most whose span ((rows - 1) · lda + n floats, after up to 3
/// that align its start) fits the stage; at least 1 for any lda when n ≤ `SGEMV_STAGED_MAX_N`.
pub const fn sgemv_staged_rows(n: usize, lda: usize) -> usize {
    let room = SGEMV_STAGED_FLOATS.saturating_sub(3 + n);
    match room.checked_div(lda) {
        Some(rows) => rows + 1,
        None => room + 1, // lda = 0 (so n = 0): rows take no room
    }
}

/// Threads per block of the split-K kernels (`Op::N`, few wide rows: a block per row chunk).
pub const SGEMV_SPLIT_BLOCK: u32 = 256;
/// Split-K: the host splits rows into column chunks until the grid holds this many blocks per
/// resident block slot, keeping each chunk at least `4 · VECTOR_UNROLL · SGEMV_SPLIT_BLOCK`
/// columns (four float4s per thread).
/// (Eight waves of shorter chunks measured slower on an H200, 2026-11-22: 64 × 2^20 82.1 µs against
/// 76.5, 256 × 2^20 274.5 against 268.2: each block's reduction and fold costs more than the
/// spread gains.)
pub const SGEMV_SPLIT_WAVES: u32 = 2;
/// Threads per block of the wide-rows kernel (`sgemv_wide_vec4`).
pub const SGEMV_WIDE_BLOCK: u32 = 256;
/// Columns of one wide-rows tile: two float4s per thread.
pub const SGEMV_WIDE_TILE: usize = 8 * SGEMV_WIDE_BLOCK as usize;
/// Wide rows: the distance between two rows' partials, `tiles` rounded up to whole float4s
/// (the group fold reads them as float4s).
pub const fn sgemv_wide_stride(tiles: usize) -> usize {
    (tiles + 3) / 4 * 4
}
/// Most rows one block of the wide-rows kernel walks (a multiple of 4 fills its row steps).
pub const SGEMV_WIDE_ROWS: usize = 32;
/// Wide rows: the host groups rows (by fours) so that the grid holds about this many blocks per
/// resident block slot (six 256-thread blocks per SM at its 38 registers). H200, 2026-11-22,
/// two runs: 64 × 2^20 in groups of 16 rows 73.7 / 72.9 µs, of 24 74.7, of 8 75.7; 256 × 2^20
/// in groups of 32 254.8 / 257.0, of 24 254.8 / 255.5, of 8 267.0.
pub const SGEMV_WIDE_WAVES: u32 = 3;
/// `Op::N` with float4-aligned rows, n at least this and m at least `SGEMV_WIDE_MIN_M` uses the
/// wide-rows kernel. (16384²: split-K 236.9 µs, wide rows 242.0.)
pub const SGEMV_WIDE_ROWS_N: usize = 1 << 16;
/// Fewer rows than this stay with split-K, which spreads each row over the device (3 × 2^20:
/// split-K 11.4 µs, wide rows 12.1).
pub const SGEMV_WIDE_MIN_M: usize = 16;
/// `Op::N` with n at least this uses split-K (a block per row chunk); narrower rows above the
/// float4 rows-per-warp sizes use `warp_rows` (a warp per four rows).
pub const SGEMV_WIDE_N: usize = 1024;
/// Threads per block of the transposed kernels (`Op::T`).
pub const SGEMV_T_BLOCK: u32 = 512;
/// Most lanes that share one row of a transposed block's column tile (4 columns each); the
/// host uses the smallest power of two covering n / 4, up to this.
pub const SGEMV_T_MAX_LANES: u32 = 32;
/// `Op::T` with few rows: lanes per row grow (up to `SGEMV_T_BLOCK / 4`) until each thread
/// gets about this many rows, so short blocks do not dominate.
pub const SGEMV_T_ROWS_PER_THREAD: usize = 16;
/// `Op::T`: rows are split across blocks until the grid holds this many blocks per resident
/// block slot (one wave: no tail of late blocks).
pub const SGEMV_T_WAVES: u32 = 1;

/// Rows each thread of the striped transposed kernels keeps in flight: `sgemv_t_stripes{depth}`,
/// deepest last. Deeper takes more registers, so fewer 512-thread blocks per SM (on an H200:
/// 40, 60 and 94 registers, so 3, 2 and 1 blocks).
pub const SGEMV_T_STRIPE_DEPTHS: [u32; 3] = [8, 16, 32];
/// `Op::T` with n from this up to `SGEMV_T_STREAM_N` takes the striped kernels. (Narrower rows
/// leave lanes idle: 2^20 × 16 took 30.1 µs against `TVec4`'s 26.9 on an H200, 2026-11-22.)
pub const SGEMV_T_STRIPES_MIN_N: usize = 512;

/// Threads per block of the streaming transposed kernels (`Op::T`, wide n: no row split).
pub const SGEMV_T_STREAM_BLOCK: u32 = 256;
/// float4 columns each thread of a streaming transposed kernel owns (its loads in flight per row).
pub const SGEMV_T_STREAM_VECS: u32 = 2;
/// `Op::T` with n at least this streams (every thread walks all rows of its own columns): the
/// columns alone give 2^19 / (4 · SGEMV_T_STREAM_VECS) = 65536 threads, enough to fill the device
/// without splitting rows, and no fold or partials are needed.
pub const SGEMV_T_STREAM_N: usize = 1 << 19;

/// A (min, max) pair as the minmax kernels write it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MinMax<T> {
    pub min: T,
    pub max: T,
}
