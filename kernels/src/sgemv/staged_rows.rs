//! Narrow rows that float4 loads cannot take one by one (A or lda not 16-byte aligned): a tile
//! of consecutive rows is one contiguous span of A, so the block copies it into shared memory
//! with aligned float4 loads (scalar ones at the span's two ends), then each thread takes whole
//! rows from there (`Op::N`), or each lane a column of some of the rows (`Op::T`, x's run staged
//! too). The next tile's loads are in flight while the block computes. Limits:
//! n ≤ `SGEMV_STAGED_MAX_N`; the gaps between rows (lda - n) are read too, so it pays only when
//! lda is close to n.
use super::problem::Gemv;
use super::tile_fold;
use crate::block::sync_threads;
use crate::config::{sgemv_staged_rows, SGEMV_STAGED_BLOCK, SGEMV_STAGED_FLOATS, SGEMV_STAGED_MAX_N, VECTOR_UNROLL};
use crate::shuffle::Shuffle;
use crate::thread::{block_index, grid_blocks, load_v4};
use core::ptr::{read_volatile, write_volatile};
use cuda_std::thread::thread_idx_x;

const B: usize = SGEMV_STAGED_BLOCK as usize;
const V: usize = VECTOR_UNROLL as usize;
// `Tile::load` names each of the V float4s.
const _: () = assert!(V == 4);

/// Four floats with a float4's alignment, so that staging them is one `st.shared.v4`.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Quad([u32; 4]);

/// A contiguous run of floats read as aligned float4s: its first float rounded down to a float4
/// (it may lie before the run; only floats of the run are read) and the floats before the run.
#[derive(Clone, Copy)]
struct Span {
    base: *const f32,
    shift: usize,
    len: usize,
}

impl Span {
    #[inline(always)]
    unsafe fn new(start: *const f32, len: usize) -> Span {
        let shift = (start as usize % 16) / 4;
        Span { base: start.sub(shift), shift, len }
    }

    /// This thread's float4s of the span: number `tid + B·k` from `base`, for k < V. Floats
    /// outside the span read as 0 (and are never used).
    #[inline(always)]
    unsafe fn load(&self) -> [Quad; V] {
        // Written out: a loop filling the array leaves it in local memory.
        [self.quad(0), self.quad(1), self.quad(2), self.quad(3)]
    }

    #[inline(always)]
    unsafe fn quad(&self, k: usize) -> Quad {
        let i = 4 * (thread_idx_x() as usize + B * k);
        let (lo, hi) = (self.shift, self.shift + self.len);
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
            if 4 * (tid + B * k) < self.shift + self.len {
                *stage.add(tid + B * k) = *q;
            }
        }
    }
}

/// One tile in A: its rows, and its span, (rows - 1) · lda + n floats.
#[derive(Clone, Copy)]
struct Tile {
    first_row: usize,
    rows: usize,
    a: Span,
}

impl Tile {
    #[inline(always)]
    unsafe fn new(g: &Gemv, tile: usize, tile_rows: usize) -> Tile {
        let first_row = tile * tile_rows;
        let rows = core::cmp::min(tile_rows, g.m - first_row);
        Tile { first_row, rows, a: Span::new(g.a.add(first_row * g.lda), (rows - 1) * g.lda + g.n) }
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
            let row = stage.add(self.a.shift + r * g.lda);
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
    let stage = cuda_std::shared_array![Quad; SGEMV_STAGED_FLOATS / 4];
    let xs = cuda_std::shared_array![f32; SGEMV_STAGED_MAX_N];
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
    let mut v = tile.a.load();
    loop {
        tile.a.stage(stage, &v);
        sync_threads();
        index += grid_blocks();
        let next = index < tiles;
        let following = if next { Tile::new(&g, index, tile_rows) } else { tile };
        v = if next { following.a.load() } else { v };
        tile.dots(&g, stage as *const f32, xs);
        sync_threads();
        if !next {
            break;
        }
        tile = following;
    }
}

/// `Op::T` of the same tiles: x's run for the tile's rows is staged beside A. Lane l of a warp
/// takes column l % P′ (P′ the power of two covering n) of rows r ≡ l / P′, so a warp step reads
/// 32 / P′ rows; each thread sums its column over every row it meets, the warp's rows then fold
/// by shuffles, the warps in order through shared memory, and the blocks in block order in the
/// grid's last block (`tile_fold`). Deterministic.
///
/// Thread mapping: block b stages tiles b, b + grid, …; thread t loads float4s t, t + B, … of
/// the tile's span and of its x, then takes rows `w · 32 / P′ + l / P′ + k · B / P′` of column
/// `l % P′` (warp w, lane l).
pub unsafe fn columns(g: Gemv, partials: *mut f32, counters: *mut u32) {
    let stage = cuda_std::shared_array![Quad; SGEMV_STAGED_FLOATS / 4];
    let x_stage = cuda_std::shared_array![Quad; SGEMV_STAGED_FLOATS / 4];
    let sums = cuda_std::shared_array![f32; B];
    let tid = thread_idx_x() as usize;
    let (lane, warp) = (tid % 32, tid / 32);
    let n = g.n;
    let mut width = 1;
    while width < n {
        width *= 2;
    }
    let (row_in_step, column) = (lane / width, lane % width);
    let rows_per_step = B / width;
    let tile_rows = sgemv_staged_rows(n, g.lda);
    let tiles = (g.m + tile_rows - 1) / tile_rows;
    let mut acc = 0.0f32;
    let mut index = block_index();
    if index < tiles {
        let mut tile = Tile::new(&g, index, tile_rows);
        let mut xs = Span::new(g.x.add(tile.first_row), tile.rows);
        let (mut v, mut w) = (tile.a.load(), xs.load());
        loop {
            tile.a.stage(stage, &v);
            xs.stage(x_stage, &w);
            sync_threads();
            index += grid_blocks();
            let next = index < tiles;
            let following = if next { Tile::new(&g, index, tile_rows) } else { tile };
            let following_xs = if next { Span::new(g.x.add(following.first_row), following.rows) } else { xs };
            v = if next { following.a.load() } else { v };
            w = if next { following_xs.load() } else { w };
            let (a, x) = ((stage as *const f32).add(tile.a.shift), (x_stage as *const f32).add(xs.shift));
            let mut r = warp * (32 / width) + row_in_step;
            while r < tile.rows {
                if column < n {
                    acc += *a.add(r * g.lda + column) * *x.add(r);
                }
                r += rows_per_step;
            }
            sync_threads();
            if !next {
                break;
            }
            tile = following;
            xs = following_xs;
        }
    }
    let mut mask = width as u32;
    while mask < 32 {
        acc += acc.shfl_xor(mask);
        mask *= 2;
    }
    if lane < width {
        *sums.add(warp * 32 + lane) = acc;
    }
    sync_threads();
    let fold_warps = |c: usize| (0..B / 32).fold(0.0f32, |t, w| t + *sums.add(w * 32 + c));
    let total = if tid < n { fold_warps(tid) } else { 0.0 };
    let grid = grid_blocks();
    if grid == 1 {
        if tid < n {
            g.store(tid, total);
        }
        return;
    }
    if tid < n {
        write_volatile(partials.add(block_index() * n + tid), total);
    }
    if tile_fold::last_of_tile(counters, grid as u32) {
        // Thread t sums blocks i ≡ t / 32 (mod B / 32) of column t % 32, eight loads at a time.
        let (c, sub, subs) = (tid % 32, tid / 32, B / 32);
        let at = |i: usize| read_volatile(partials.add(i * n + c));
        let mut s = 0.0f32;
        if c < n {
            let mut i = sub;
            while i + 7 * subs < grid {
                let p = [at(i), at(i + subs), at(i + 2 * subs), at(i + 3 * subs)];
                let q = [at(i + 4 * subs), at(i + 5 * subs), at(i + 6 * subs), at(i + 7 * subs)];
                s = s + p[0] + p[1] + p[2] + p[3] + q[0] + q[1] + q[2] + q[3];
                i += 8 * subs;
            }
            while i < grid {
                s += at(i);
                i += subs;
            }
        }
        *sums.add(tid) = s;
        sync_threads();
        if tid < n {
            g.store(tid, fold_warps(tid));
        }
    }
}
