//! Narrow rows that float4 loads cannot take one by one (A or lda not 16-byte aligned): a tile
//! of consecutive rows is one contiguous span of A, so the block copies it into shared memory
//! with aligned float4 loads (scalar ones at the span's two ends), then each thread takes whole
//! rows from there. The next tile's loads are in flight while the block computes. Limits:
//! n ≤ `SGEMV_STAGED_MAX_N` (x in shared memory, read by every thread); the gaps between rows (lda - n) are read too, so it pays only when
//! lda is close to n.
use super::problem::Gemv;
use crate::block::sync_threads;
use crate::config::{sgemv_staged_rows, SGEMV_STAGED_BLOCK, SGEMV_STAGED_FLOATS, SGEMV_STAGED_MAX_N, VECTOR_UNROLL};
use crate::shared::shared_array;
use crate::thread::{block_index, grid_blocks, load_v4};
use cuda_std::thread::thread_idx_x;

const B: usize = SGEMV_STAGED_BLOCK as usize;
const V: usize = VECTOR_UNROLL as usize;
// `Tile::load` names each of the V float4s.
const _: () = assert!(V == 4);

/// Four floats with a float4's alignment, so that staging them is one `st.shared.v4`.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Quad([u32; 4]);

/// One tile in A: its rows, and its span with the floats before it in its first float4.
#[derive(Clone, Copy)]
struct Tile {
    first_row: usize,
    rows: usize,
    /// The span's first float rounded down to a float4 (it may lie before A; only floats of
    /// the span are read).
    base: *const f32,
    /// Floats from `base` to the span.
    shift: usize,
    /// Floats in the span: (rows - 1) · lda + n.
    span: usize,
}

impl Tile {
    #[inline(always)]
    unsafe fn new(g: &Gemv, tile: usize, tile_rows: usize) -> Tile {
        let first_row = tile * tile_rows;
        let rows = core::cmp::min(tile_rows, g.m - first_row);
        let start = g.a.add(first_row * g.lda);
        let shift = (start as usize % 16) / 4;
        Tile { first_row, rows, base: start.sub(shift), shift, span: (rows - 1) * g.lda + g.n }
    }

    /// This thread's float4s of the tile: number `tid + B·k` from `base`, for k < V. Floats
    /// outside the span read as 0 (and are never used).
    #[inline(always)]
    unsafe fn load(&self) -> [Quad; V] {
        // Written out: a loop filling the array leaves it in local memory.
        [self.quad(0), self.quad(1), self.quad(2), self.quad(3)]
    }

    #[inline(always)]
    unsafe fn quad(&self, k: usize) -> Quad {
        let i = 4 * (thread_idx_x() as usize + B * k);
        let (lo, hi) = (self.shift, self.shift + self.span);
        if i >= lo && i + 4 <= hi {
            Quad(load_v4(self.base.add(i) as *const [u32; 4]))
        } else if i + 4 > lo && i < hi {
            let at = |e: usize| if i + e >= lo && i + e < hi { (*self.base.add(i + e)).to_bits() } else { 0 };
            Quad([at(0), at(1), at(2), at(3)])
        } else {
            Quad([0; 4])
        }
    }

    /// Stores this thread's float4s at their offsets from `base` in `stage`.
    #[inline(always)]
    unsafe fn stage(&self, stage: *mut Quad, v: &[Quad; V]) {
        let tid = thread_idx_x() as usize;
        for (k, q) in v.iter().enumerate() {
            if 4 * (tid + B * k) < self.shift + self.span {
                *stage.add(tid + B * k) = *q;
            }
        }
    }

    /// Thread t computes rows t, t + B, … of the staged tile and stores them in y.
    #[inline(always)]
    unsafe fn dots(&self, g: &Gemv, stage: *const f32, xs: *const f32) {
        let n = g.n as u32;
        // Threads read rows lda apart: an odd lda puts a warp's 32 rows in 32 banks; an even
        // one would stack them, so row r then starts at column r mod n.
        let skew = g.lda % 2 == 0 && n > 0;
        let mut r = thread_idx_x() as usize;
        while r < self.rows {
            let row = stage.add(self.shift + r * g.lda);
            let mut c = if skew { r as u32 % n } else { 0 };
            let mut dot = 0.0f32;
            for _ in 0..n {
                dot += *row.add(c as usize) * *xs.add(c as usize);
                c = if c + 1 == n { 0 } else { c + 1 };
            }
            g.store(self.first_row + r, dot);
            r += B;
        }
    }
}

/// Thread mapping: block b stages tiles b, b + grid, … of `sgemv_staged_rows(n, lda)` rows;
/// thread t loads float4s t, t + B, … of a tile's span and computes its rows t, t + B, ….
pub unsafe fn rows(g: Gemv) {
    let stage = shared_array!(SHARED_STAGED_ROWS_A: [Quad; SGEMV_STAGED_FLOATS / 4]);
    let xs = shared_array!(SHARED_STAGED_ROWS_X: [f32; SGEMV_STAGED_MAX_N]);
    let tid = thread_idx_x() as usize;
    if tid < g.n {
        *xs.add(tid) = *g.x.add(tid);
    }
    let tile_rows = sgemv_staged_rows(g.n, g.lda);
    let tiles = (g.m + tile_rows - 1) / tile_rows;
    let mut index = block_index();
    if index >= tiles {
        return;
    }
    let mut tile = Tile::new(&g, index, tile_rows);
    let mut v = tile.load();
    loop {
        tile.stage(stage, &v);
        sync_threads();
        index += grid_blocks();
        let next = index < tiles;
        let following = if next { Tile::new(&g, index, tile_rows) } else { tile };
        v = if next { following.load() } else { v };
        tile.dots(&g, stage as *const f32, xs);
        sync_threads();
        if !next {
            break;
        }
        tile = following;
    }
}
