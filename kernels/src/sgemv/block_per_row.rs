//! One block per row for wide matrices with few rows: `SGEMV_ROW_BLOCK` threads stride over the
//! columns, then a block reduction. Blocks stride over rows (grid ≤ m, any m).
use super::problem::Gemv;
use crate::block;
use crate::ops::Sum;
use crate::thread::{block_index, grid_blocks};
use cuda_std::thread::{block_dim_x, thread_idx_x};

pub unsafe fn block_per_row(g: Gemv) {
    let Gemv { a, x, m, n, lda, .. } = g;
    let mut row = block_index();
    while row < m {
        let arow = a.add(row * lda);
        let mut acc = 0.0f32;
        let mut j = thread_idx_x() as usize;
        while j < n {
            acc += *arow.add(j) * *x.add(j);
            j += block_dim_x() as usize;
        }
        let dot = block::reduce::<Sum<f32>>(acc);
        if thread_idx_x() == 0 {
            g.store(row, dot);
        }
        row += grid_blocks();
    }
}
