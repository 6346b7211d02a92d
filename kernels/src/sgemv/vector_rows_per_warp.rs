//! Several rows per warp with float4 loads: `L` lanes per row, one float4 each, so a row holds
//! n ≤ 4L columns (n % 4 == 0) and a warp step covers `32 / L` rows, read as one contiguous
//! 512-byte stretch when lda = n. L = 32 is the n = 128 kernel (one warp per row); L = 4 and
//! L = 8 are the float4 forms of the n = 16 and n = 32 kernels. Needs A and x 16-byte aligned
//! and `lda % 4 == 0` (the host checks).
use super::problem::Gemv;
use super::row_tiles::for_each_tile;
use crate::config::{SGEMV_ROW_UNROLL, WARP_SIZE};
use crate::ops::Sum;
use crate::thread::dot4;
use crate::thread::load_v4;
use crate::warp;

const K: usize = SGEMV_ROW_UNROLL as usize;

/// Thread mapping: lane `l` takes columns `4 (l % L) .. 4 (l % L) + 4` of row `l / L` of each
/// warp step; a tile is `K` steps, all loads issued before the segmented reductions.
pub unsafe fn rows<const L: u32>(g: Gemv) {
    let Gemv { a, x, m, n, lda, .. } = g;
    let rows_per_step = (WARP_SIZE / L) as usize;
    let lane = warp::lane();
    let (seg, col) = ((lane / L) as usize, 4 * (lane % L) as usize);
    let active = col < n;
    let xv = if active { load_v4(x.add(col) as *const [u32; 4]) } else { [0; 4] };
    for_each_tile(m, K * rows_per_step, |first| {
        let mut av = [[0u32; 4]; K];
        for k in 0..K {
            let row = first + k * rows_per_step + seg;
            if active && row < m {
                av[k] = load_v4(a.add(row * lda + col) as *const [u32; 4]);
            }
        }
        for k in 0..K {
            let dot = warp::segment_reduce::<Sum<f32>, L>(dot4(av[k], xv));
            let row = first + k * rows_per_step + seg;
            if col == 0 && row < m {
                g.store(row, dot);
            }
        }
    });
}
