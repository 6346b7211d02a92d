//! One block per row for wide matrices with few rows: `SGEMV_ROW_BLOCK` threads stride over the
//! columns, then a block reduction. Blocks stride over rows (grid ≤ m, any m).
use super::row_tiles::store_y;
use crate::block;
use crate::ops::Sum;
use crate::thread::{block_index, grid_blocks};
use cuda_std::thread::{block_dim_x, thread_idx_x};

pub unsafe fn block_per_row(
    a: *const f32,
    x: *const f32,
    m: usize,
    n: usize,
    lda: usize,
    alpha: f32,
    beta: f32,
    y: *mut f32,
) {
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
            store_y(y, row, dot, alpha, beta);
        }
        row += grid_blocks();
    }
}
