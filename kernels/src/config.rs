//! Tuning constants and launch conventions shared by kernels and host, each with the reason for
//! its value (the measurements are in docs/tuning-log.md). The host reads them from here; nothing
//! in this file is repeated on the host side. The lists of kernels are not here: each family's
//! table makes its entry points and its list (`sgemv::SGEMV_KERNELS`, `reduce::LadderKernel`).

/// Architectures (10 · major + minor) the PTX is assembled to SASS cubins for, by `build.rs`
/// with `from-source`; committed in `kernels/images/`. sm_86 and sm_89 run sm_80's SASS (a
/// cubin runs on later minor versions of its major version): cubins of their own would take
/// the kernels' package past the registry's 10 MiB. Other devices JIT-compile the PTX.
pub const SASS_ARCHES: [u32; 2] = [80, 90];

include!("grid_wait_config.rs");

/// Threads in a warp.
pub const WARP_SIZE: u32 = 32;
/// Largest block any kernel is launched with; static shared arrays are sized for it.
pub const MAX_BLOCK: u32 = 1024;
/// The most parameters (slices count two: pointer and length) an entry point may take: the
/// host's launch holds them in a fixed array.
pub const MAX_KERNEL_PARAMS: usize = 24;

/// Bytes one vector load moves (`ld.global.nc.v4.u32`).
pub const VECTOR_BYTES: usize = 16;
/// Vector loads each thread keeps in flight per iteration in the vectorized kernels.
pub const VECTOR_UNROLL: u32 = 4;
/// The fast path (`Auto` sums and the typed reductions): (input bytes up to, threads per
/// block, 16-byte vectors per thread until the grid reaches the resident blocks), first
/// matching row. Smaller blocks shorten the launch and the tail on small inputs; 1024-thread
/// blocks stream best on large ones (docs/results/2026-11-21-h200/raw-output.md, fast-path tuning).
pub const FAST_LAUNCH: [(usize, u32, u32); 3] = [(8 << 20, 256, 4), (64 << 20, 512, 4), (usize::MAX, 1024, 4)];
/// Arg value calls of at most this many blocks publish every block's result to the host, which
/// folds them: the ticket, fence and last-block fold leave the call's critical path. 64 covers
/// an LLM's logits (128,256 of them take 16 blocks in bf16, 32 in f32) with 4 KiB of host words.
pub const ARG_HOST_FOLD_BLOCKS: u32 = 64;
/// Threads per block of the zero fill (`fill`, one 16-byte store a thread): the fewest blocks.
/// On an H200, 512 MiB took 117.4 µs in blocks of 256 or 1024 and 161 in blocks of 128, whose
/// 2^18 blocks outran the block scheduler (tuning log, "A zero fill").
pub const FILL_BLOCK: u32 = 1024;
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
    /// Every block draws a ticket from `counter` as it starts and stores its value with a ready
    /// flag in one 64-bit slot of `partials`; the block with the last ticket waits for every
    /// flag, folds the slots in block order into `out[0]`, clears them and resets `counter`: one
    /// launch, deterministic, no fence, and progress under any dispatch order. 32-bit values
    /// only; the slots and the counter must be zero before the launch (the kernel leaves them so).
    pub const FLAGGED: u32 = 3;
}

/// Threads per block of every sgemv kernel except block-per-row.
pub const SGEMV_BLOCK: u32 = 256;
/// Threads per block of the block-per-row sgemv kernel.
pub const SGEMV_ROW_BLOCK: u32 = 256;
/// Row groups in one warp's tile, with all their loads issued before any reduction.
pub const SGEMV_ROW_UNROLL: u32 = 4;

/// Threads per block of the staged narrow-rows kernel (`sgemv_staged_rows`).
pub const SGEMV_STAGED_BLOCK: u32 = 256;
/// Floats of A in one staged tile: `VECTOR_UNROLL` float4s per thread.
pub const SGEMV_STAGED_FLOATS: usize = 4 * (VECTOR_UNROLL * SGEMV_STAGED_BLOCK) as usize;
/// Widest rows the staged kernel takes (x waits in shared memory): up to a warp's float4s, so
/// unaligned rows of 33 to 128 floats (2^20 × 97) are staged too instead of read a float per
/// lane.
pub const SGEMV_STAGED_MAX_N: usize = 128;
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
/// columns (four float4s per thread). More waves of shorter chunks were slower: each block's
/// reduction and fold costs more than the spread gains.
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
/// resident block slot (six 256-thread blocks per SM at its 38 registers): the fastest grouping
/// measured on 64 × 2^20 and 256 × 2^20.
pub const SGEMV_WIDE_WAVES: u32 = 3;
/// `Op::N` with float4-aligned rows, n at least this and m at least `SGEMV_WIDE_MIN_M` uses the
/// wide-rows kernel (narrower, split-K was faster).
pub const SGEMV_WIDE_ROWS_N: usize = 1 << 16;
/// Fewer rows than this stay with split-K, which spreads each row over the device.
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

/// `Op::T` with n from this up to `SGEMV_T_STREAM_N` takes the striped kernels (but see
/// `SGEMV_T_VEC4_BAND`): from 32 to 128 columns they beat `TVec4` by 3–17% on 2^11 to 2^20 rows
/// (plans on an H100); 16 columns fill half a stripe and lose 4%.
pub const SGEMV_T_STRIPES_MIN_N: usize = 32;
/// `Op::T` with n in this range takes `TVec4` (or `TScalar`) after all: at 2^20 × 256 it was
/// 1–2% faster than the striped kernels in four calls (H100).
pub const SGEMV_T_VEC4_BAND: (usize, usize) = (256, 512);

/// Threads per block of the streaming transposed kernels (`Op::T`, wide n: no row split).
pub const SGEMV_T_STREAM_BLOCK: u32 = 256;
/// float4 columns each thread of a streaming transposed kernel owns (its loads in flight per row).
pub const SGEMV_T_STREAM_VECS: u32 = 2;
/// `Op::T` with n at least this streams (every thread walks all rows of its own columns): the
/// columns alone give 2^19 / (4 · SGEMV_T_STREAM_VECS) = 65536 threads, enough to fill the device
/// without splitting rows, and no fold or partials are needed.
pub const SGEMV_T_STREAM_N: usize = 1 << 19;

/// Threads per block of the axis kernels (rows, columns and the fold of split partials).
pub const AXIS_BLOCK: u32 = 256;
/// Threads per block of the `rows` kernels over segments: a block keeps its SM slot until its
/// longest segment is done, and ragged segments leave a wide block's other warps idle.
pub const AXIS_SEGMENT_BLOCK: u32 = 64;
/// Axis rows: rows are split into chunks only while fewer than this many warps per SM would
/// hold whole rows (below it, too few 16-byte loads are in flight to reach full bandwidth).
pub const AXIS_SPLIT_BELOW_WARPS_PER_SM: usize = 16;
/// Axis rows: a split aims at this many warps per SM: each keeps two batches in flight, and
/// longer pieces leave fewer partials (16 × 2^22 on an H200: 132 pieces a row within 1.5% of the
/// fastest of 132 to 792 for sum, max and argmax, f32 and bf16).
pub const AXIS_SPLIT_WARPS_PER_SM: usize = 16;
/// Axis rows: the smallest chunk of a split row, in bytes: four batches of four 16-byte loads
/// per lane of a warp, so each warp's fixed cost (its reduction and partial) stays small.
pub const AXIS_MIN_CHUNK_BYTES: usize = 8192;
/// Axis rows of the typed ops that are not split take a whole block each from this many bytes
/// (a warp per piece, folded in the block): every warp reads at least one batch, four 16-byte
/// vectors a lane, and a block's loads cover one stretch of its row, as CUB's blocks do.
pub const AXIS_BLOCK_ROW_MIN_BYTES: usize = AXIS_BLOCK as usize * 4 * VECTOR_BYTES;
/// Axis columns, a column per thread: rows are split across blocks up to a grid of this many
/// blocks per SM, no more (a full SM: each thread has eight 4-byte or smaller loads in flight).
pub const AXIS_COLUMN_BLOCKS_PER_SM: usize = 8;
/// Axis columns, a 16-byte vector of columns per thread: the same target. Each thread has eight
/// 16-byte loads in flight, so two blocks per SM keep enough bytes in flight, and more splits
/// only add partials and per-thread setup (axis-tuning: a quarter of the scalar target was the
/// fastest or within 3% on every benchmark shape, with four loads in flight and with eight).
pub const AXIS_VECTOR_COLUMN_BLOCKS_PER_SM: usize = 2;
/// Axis columns: the fewest rows a thread walks in one split (its loads in flight, eight at once).
pub const AXIS_MIN_ROWS_PER_THREAD: usize = 16;
/// Axis columns, a 16-byte vector of columns per thread: the same bound. A split of fewer rows
/// costs more in its fold launch than its blocks gain (axis-tuning, 32 × 128,256: one split
/// 14–17 µs, two 18–26; 4096² bf16 columns: 64 splits of 64 rows 8–12% faster than 128 of 32 for
/// sums on an H100 and an H200, and f32's 64 splits faster than 66 of 62 or 63 rows on the H200).
pub const AXIS_VECTOR_MIN_ROWS_PER_THREAD: usize = 64;
/// Axis column argmin and argmax of halves fold words of columns (the `words` kernels,
/// `column_tracks`) when each thread walks at least this many rows, the fewest measured: against
/// `cols`, 16 × 2^22 bf16 argmax (16 rows) 72.8 → 58.5 µs, 32 × 128,256 (32 rows) 14.2 → 9.9,
/// 4096² 30.0 → 24.0 (H200, uniform inputs).
pub const AXIS_WORD_TRACK_MIN_ROWS: usize = 16;
/// Axis column argmin and argmax of halves by words, where no narrower tile fills the device
/// (the host's `word_tile`): the blocks per SM their splits in `cols`' tile aim for instead of
/// `AXIS_VECTOR_COLUMN_BLOCKS_PER_SM`. Each thread ends its walk with a pick per column and the
/// splits' pairs fold at the end, so longer walks pay: 8192 × 28,672 bf16 argmax 152.2 → 143.4
/// µs, 2^20 × 64 79.0 → 60.2, the shapes of one split unchanged (H200; three blocks per SM 20%
/// slower).
pub const AXIS_WORD_COLUMN_BLOCKS_PER_SM: usize = 1;
/// Axis columns folded in their launch: the narrowest tile's share of a row, in bytes (2^20 ×
/// 64 bf16 column sums took 39.5 µs in tiles of 128 bytes, 40.7 in 64 and 46.6 in 32; f32 66.9,
/// 77.9 and 90.7, H200).
pub const AXIS_TILE_MIN_BYTES: usize = 128;
/// Threads per block of the batched `Op::N` kernel (a warp per row, as the row kernels).
pub const SGEMV_BATCHED_BLOCK: u32 = 256;
/// Rows a warp of the batched `Op::N` kernel sums at once (their loads in flight together).
pub const SGEMV_BATCHED_ROWS: usize = 4;
/// 16-byte loads of A a lane of the vectorized batched `Op::N` kernel keeps in flight (rows of
/// one step each, or steps of one long row): 2 KiB per warp of halves.
pub const SGEMV_VECTOR_DEPTH: usize = 8;
/// Rows (of all problems) from which short rows of halves take eight rows per group: from 64
/// heads of 512 the deeper tiles still cover an H100's SMs (tuning log, short rows of halves);
/// with fewer, they would leave more of the SMs without one.
pub const SGEMV_SHORT_MIN_ROWS: usize = 1 << 15;
/// Rows per group of lanes of the shallow short-row tiles (`RowWalk::ShallowShort`), for calls
/// with few tiles per resident warp: four loads in flight take under 64 registers, so four
/// blocks a SM where eight allow three (tuning log, four rows a group).
pub const SGEMV_SHALLOW_DEPTH: usize = 4;
/// Threads per block of the batched `Op::T` kernel: 32 warps over one 32-column tile, so that a
/// block alone keeps enough rows in flight for an SM.
pub const SGEMV_BATCHED_T_BLOCK: u32 = 1024;

/// A (min, max) pair as the minmax kernels write it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MinMax<T> {
    pub min: T,
    pub max: T,
}

/// A value and its index, as the arg kernels (argmin, argmax, argminmax) write them: `repr(C)`,
/// so the value's bytes, padding to 8, then the index's.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ValueIndex<T> {
    pub value: T,
    pub index: u64,
}
