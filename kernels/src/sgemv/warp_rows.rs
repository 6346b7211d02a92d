//! A warp per tile of `SGEMV_ROW_UNROLL` rows for medium n (`Op::N`): lane l owns quads
//! l, l + 32, … of every row; each step loads two quads of each row of the tile (eight loads in
//! flight), then one warp reduction per row. Float4 when `VEC` (aligned A and x, lda % 4 == 0),
//! else scalar loads; any n.
use super::problem::Gemv;
use super::row_tiles::for_each_tile;
use crate::config::{SGEMV_ROW_UNROLL, WARP_SIZE};
use crate::ops::Sum;
use crate::thread::{dot4, load4};
use crate::warp;

const R: usize = SGEMV_ROW_UNROLL as usize;
const W: usize = WARP_SIZE as usize;

/// Thread mapping: see the file comment; rows past m in the last tile load nothing.
pub unsafe fn rows<const VEC: bool>(g: Gemv) {
    let Gemv { a, x, m, n, lda, .. } = g;
    let lane = warp::lane() as usize;
    let (full, rem) = (n / 4, n % 4);
    for_each_tile(m, R, |first| {
        let rows = core::cmp::min(R, m - first);
        let mut acc = [0.0f32; R];
        let mut q = lane;
        while q + W < full {
            let xv = [load4::<VEC>(x.add(4 * q), 4), load4::<VEC>(x.add(4 * (q + W)), 4)];
            let mut av = [[[0u32; 4]; 2]; R];
            for r in 0..R {
                if r < rows {
                    let arow = a.add((first + r) * lda);
                    av[r] = [load4::<VEC>(arow.add(4 * q), 4), load4::<VEC>(arow.add(4 * (q + W)), 4)];
                }
            }
            for r in 0..R {
                acc[r] += dot4(av[r][0], xv[0]);
                acc[r] += dot4(av[r][1], xv[1]);
            }
            q += 2 * W;
        }
        if q < full {
            let xv = load4::<VEC>(x.add(4 * q), 4);
            for r in 0..R {
                if r < rows {
                    acc[r] += dot4(load4::<VEC>(a.add((first + r) * lda + 4 * q), 4), xv);
                }
            }
        }
        if lane == 0 && rem != 0 {
            let xv = load4::<false>(x.add(4 * full), rem);
            for r in 0..R {
                if r < rows {
                    acc[r] += dot4(load4::<false>(a.add((first + r) * lda + 4 * full), rem), xv);
                }
            }
        }
        for r in 0..R {
            let dot = warp::reduce::<Sum<f32>>(acc[r]);
            if lane == 0 && r < rows {
                g.store(first + r, dot);
            }
        }
    });
}
