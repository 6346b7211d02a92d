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
    let Gemv { a, x, m, n, lda, .. } = g;
    let (tid, threads) = (thread_idx_x() as usize, block_dim_x() as usize);
    let tile_cols = 4 * F * threads;
    let tiles = (n + tile_cols - 1) / tile_cols;
    let mut tile = block_idx_x() as usize;
    while tile < tiles {
        let c0 = tile * tile_cols + 4 * tid;
        let c1 = c0 + 4 * threads;
        let (n0, n1) = (core::cmp::min(n.saturating_sub(c0), 4), core::cmp::min(n.saturating_sub(c1), 4));
        if n0 > 0 {
            // A column group past n reads the first one again (a valid address) and is not stored.
            let (c1r, n1r) = if n1 > 0 { (c1, n1) } else { (c0, n0) };
            let at0 = |r: usize| a.add(r * lda + c0);
            let at1 = |r: usize| a.add(r * lda + c1r);
            let mut total = [0.0f32; 8];
            let mut r = 0;
            while r < m {
                let end = core::cmp::min(r + CHUNK, m);
                let mut part = [0.0f32; 8];
                while r + 3 < end {
                    let av = [
                        load4::<VEC>(at0(r), n0),
                        load4::<VEC>(at1(r), n1r),
                        load4::<VEC>(at0(r + 1), n0),
                        load4::<VEC>(at1(r + 1), n1r),
                        load4::<VEC>(at0(r + 2), n0),
                        load4::<VEC>(at1(r + 2), n1r),
                        load4::<VEC>(at0(r + 3), n0),
                        load4::<VEC>(at1(r + 3), n1r),
                    ];
                    let xv = [*x.add(r), *x.add(r + 1), *x.add(r + 2), *x.add(r + 3)];
                    for k in 0..4 {
                        for c in 0..4 {
                            part[c] += f32::from_bits(av[2 * k][c]) * xv[k];
                            part[4 + c] += f32::from_bits(av[2 * k + 1][c]) * xv[k];
                        }
                    }
                    r += 4;
                }
                if r < end {
                    // One to three rows left: one round, rows past `end` read the last row again
                    // and add nothing.
                    let last = end - 1;
                    let rs = [r, core::cmp::min(r + 1, last), core::cmp::min(r + 2, last)];
                    let av = [
                        load4::<VEC>(at0(rs[0]), n0),
                        load4::<VEC>(at1(rs[0]), n1r),
                        load4::<VEC>(at0(rs[1]), n0),
                        load4::<VEC>(at1(rs[1]), n1r),
                        load4::<VEC>(at0(rs[2]), n0),
                        load4::<VEC>(at1(rs[2]), n1r),
                    ];
                    let xv = [*x.add(rs[0]), *x.add(rs[1]), *x.add(rs[2])];
                    for k in 0..3 {
                        let live = r + k < end;
                        for c in 0..4 {
                            let (p0, p1) =
                                (f32::from_bits(av[2 * k][c]) * xv[k], f32::from_bits(av[2 * k + 1][c]) * xv[k]);
                            part[c] = if live { part[c] + p0 } else { part[c] };
                            part[4 + c] = if live { part[4 + c] + p1 } else { part[4 + c] };
                        }
                    }
                    r = end;
                }
                for c in 0..8 {
                    total[c] += part[c];
                }
            }
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
