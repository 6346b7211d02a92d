//! `Op::T` for wide matrices (n large, any m): no row split at all. Thread t of a block owns
//! `SGEMV_T_STREAM_VECS` float4 columns of its column tile (`4t`, `4t + 4B`, … within the
//! tile, B = block size, so each warp load covers 512 contiguous bytes) and walks every row,
//! four rows (eight loads) in flight, the leftover rows of each 32 in one masked round. Rows
//! are summed in order in chunks of 32, chunk sums in order (a chain of ≤ 32 + m/32 additions).
//! Blocks stride over column tiles. No shared memory, no partials: deterministic. Limits:
//! float4 (`VEC`) needs aligned A, lda % 4 == 0 and n % 4 == 0.
use super::problem::Gemv;
use crate::config::SGEMV_T_STREAM_VECS;
use crate::thread::load4;
use cuda_std::thread::{block_dim_x, block_idx_x, grid_dim_x, thread_idx_x};

const F: usize = SGEMV_T_STREAM_VECS as usize;
const _: () = assert!(F == 2, "the loop below is written out for two float4 columns per thread");
/// Rows summed into one chunk sum before it is added to the total.
const CHUNK: usize = 32;

/// Thread mapping: see the file comment.
pub unsafe fn columns<const VEC: bool>(g: Gemv) {
    let (n, threads) = (g.n, block_dim_x() as usize);
    let tile_cols = 4 * F * threads;
    let tiles = (n + tile_cols - 1) / tile_cols;
    let mut tile = block_idx_x() as usize;
    while tile < tiles {
        let c0 = tile * tile_cols + 4 * thread_idx_x() as usize;
        let c1 = c0 + 4 * threads;
        let (n0, n1) = (core::cmp::min(n.saturating_sub(c0), 4), core::cmp::min(n.saturating_sub(c1), 4));
        if n0 > 0 {
            // A column group past n reads the first one again (a valid address) and is not stored.
            let cols = if n1 > 0 { Columns { c0, n0, c1, n1 } } else { Columns { c0, n0, c1: c0, n1: n0 } };
            let total = walk_rows::<VEC>(&g, cols);
            // Constant indices (a loop to n0 would put `total` in local memory).
            for c in 0..4 {
                if c < n0 {
                    g.store(c0 + c, total[c]);
                }
                if c < n1 {
                    g.store(c1 + c, total[4 + c]);
                }
            }
        }
        tile += grid_dim_x() as usize;
    }
}

/// A thread's two float4 column groups: first columns and how many of each lie before n.
#[derive(Clone, Copy)]
struct Columns {
    c0: usize,
    n0: usize,
    c1: usize,
    n1: usize,
}

/// The dot products of the thread's eight columns with x over every row: chunks of `CHUNK` rows
/// summed in order, four rows in flight, then the chunk's leftover rows in one round.
#[inline(always)]
unsafe fn walk_rows<const VEC: bool>(g: &Gemv, cols: Columns) -> [f32; 8] {
    let mut total = [0.0f32; 8];
    let mut r = 0;
    while r < g.m {
        let end = core::cmp::min(r + CHUNK, g.m);
        let mut part = [0.0f32; 8];
        while r + 3 < end {
            four_rows::<VEC>(g, cols, r, &mut part);
            r += 4;
        }
        if r < end {
            last_rows::<VEC>(g, cols, r, end, &mut part);
            r = end;
        }
        for c in 0..8 {
            total[c] += part[c];
        }
    }
    total
}

/// Rows `r` to `r + 3` into `part`: eight float4 loads, then the products.
#[inline(always)]
unsafe fn four_rows<const VEC: bool>(g: &Gemv, cols: Columns, r: usize, part: &mut [f32; 8]) {
    let (at0, at1) = (|r: usize| g.a.add(r * g.lda + cols.c0), |r: usize| g.a.add(r * g.lda + cols.c1));
    let (n0, n1) = (cols.n0, cols.n1);
    let av = [
        load4::<VEC>(at0(r), n0),
        load4::<VEC>(at1(r), n1),
        load4::<VEC>(at0(r + 1), n0),
        load4::<VEC>(at1(r + 1), n1),
        load4::<VEC>(at0(r + 2), n0),
        load4::<VEC>(at1(r + 2), n1),
        load4::<VEC>(at0(r + 3), n0),
        load4::<VEC>(at1(r + 3), n1),
    ];
    let x = g.x;
    let xv = [*x.add(r), *x.add(r + 1), *x.add(r + 2), *x.add(r + 3)];
    for k in 0..4 {
        for c in 0..4 {
            part[c] += f32::from_bits(av[2 * k][c]) * xv[k];
            part[4 + c] += f32::from_bits(av[2 * k + 1][c]) * xv[k];
        }
    }
}

/// One to three rows `r..end` into `part` in one round: rows past `end` read the last row again
/// and add nothing.
#[inline(always)]
unsafe fn last_rows<const VEC: bool>(g: &Gemv, cols: Columns, r: usize, end: usize, part: &mut [f32; 8]) {
    let (at0, at1) = (|r: usize| g.a.add(r * g.lda + cols.c0), |r: usize| g.a.add(r * g.lda + cols.c1));
    let (n0, n1) = (cols.n0, cols.n1);
    let last = end - 1;
    let rs = [r, core::cmp::min(r + 1, last), core::cmp::min(r + 2, last)];
    let av = [
        load4::<VEC>(at0(rs[0]), n0),
        load4::<VEC>(at1(rs[0]), n1),
        load4::<VEC>(at0(rs[1]), n0),
        load4::<VEC>(at1(rs[1]), n1),
        load4::<VEC>(at0(rs[2]), n0),
        load4::<VEC>(at1(rs[2]), n1),
    ];
    let x = g.x;
    let xv = [*x.add(rs[0]), *x.add(rs[1]), *x.add(rs[2])];
    for k in 0..3 {
        let live = r + k < end;
        for c in 0..4 {
            let (p0, p1) = (f32::from_bits(av[2 * k][c]) * xv[k], f32::from_bits(av[2 * k + 1][c]) * xv[k]);
            part[c] = if live { part[c] + p0 } else { part[c] };
            part[4 + c] = if live { part[4 + c] + p1 } else { part[4 + c] };
        }
    }
}
