//! Split-K with x staged in shared memory (`Op::N`, wide rows, any lda and offset): block b
//! takes column chunk `b % splits` (`chunk` ≤ `SGEMV_STAGE_COLS` columns) of the `rows` rows
//! of group `b / splits`. It copies x's chunk into shared memory once, then walks its rows one
//! after another, each read with float4 loads from its first 16-byte boundary (scalar head and
//! tail) against x from shared memory: unaligned rows run at vector speed, and x leaves L2 once
//! per `rows` rows instead of once per row. Each warp sums its share of a row by shuffles; the
//! row's chunk sum is the warps' sums in warp order. With several splits, each row's last block
//! (a ticket per row) folds the row's partials in split order. Deterministic.
//! Limits: `chunk` ≤ `SGEMV_STAGE_COLS`, `rows` ≤ `SGEMV_STAGE_ROWS`, block = `SGEMV_SPLIT_BLOCK`.
use super::problem::Gemv;
use super::tile_fold;
use crate::block::{self, fence_acq_rel_gpu, sync_threads};
use crate::config::{SGEMV_SPLIT_BLOCK, SGEMV_STAGE_COLS, SGEMV_STAGE_ROWS, VECTOR_BYTES, WARP_SIZE};
use crate::ops::Sum;
use crate::thread::{block_index, load_v4};
use crate::warp;
use core::ptr::write_volatile;
use cuda_std::thread::thread_idx_x;

const B: usize = SGEMV_SPLIT_BLOCK as usize;
const WARPS: usize = B / WARP_SIZE as usize;

/// Four A words against the four staged x values at `xs` (any alignment: scalar shared loads).
#[inline(always)]
unsafe fn dot_staged(a: [u32; 4], xs: *const f32) -> f32 {
    let mut acc = 0.0f32;
    for k in 0..4 {
        acc += f32::from_bits(a[k]) * *xs.add(k);
    }
    acc
}

/// This warp's share of one row's chunk: `arow` holds `len` floats, `xs` the staged x.
/// Thread t reads float4 t, t + B, … from the row's first 16-byte boundary, four in flight.
#[inline(always)]
unsafe fn row_chunk(arow: *const f32, xs: *const f32, len: usize, tid: usize) -> f32 {
    let bytes = VECTOR_BYTES;
    let head = core::cmp::min((bytes - arow as usize % bytes) % bytes / 4, len);
    let vecs = (len - head) / 4;
    let tail = head + 4 * vecs;
    let mut acc = 0.0f32;
    if tid < head {
        acc += *arow.add(tid) * *xs.add(tid);
    }
    if tid < len - tail {
        acc += *arow.add(tail + tid) * *xs.add(tail + tid);
    }
    let (av, xv) = (arow.add(head) as *const [u32; 4], xs.add(head));
    let mut q = tid;
    while q + 3 * B < vecs {
        let v = [load_v4(av.add(q)), load_v4(av.add(q + B)), load_v4(av.add(q + 2 * B)), load_v4(av.add(q + 3 * B))];
        for k in 0..4 {
            acc += dot_staged(v[k], xv.add(4 * (q + k * B)));
        }
        q += 4 * B;
    }
    while q < vecs {
        acc += dot_staged(load_v4(av.add(q)), xv.add(4 * q));
        q += B;
    }
    warp::reduce::<Sum<f32>>(acc)
}

/// Thread mapping: see the file comment; after the rows, thread k < rows owns row k's sum.
pub unsafe fn rows(g: Gemv, chunk: usize, rows: usize, partials: *mut f32, counters: *mut u32) {
    let Gemv { a, x, m, n, lda, .. } = g;
    let xs = cuda_std::shared_array![f32; SGEMV_STAGE_COLS];
    let warp_sums = cuda_std::shared_array![f32; SGEMV_STAGE_ROWS * WARPS];
    let last = cuda_std::shared_array![u32; SGEMV_STAGE_ROWS];
    let splits = core::cmp::max((n + chunk - 1) / chunk, 1);
    let b = block_index();
    let (group, split) = (b / splits, b % splits);
    let start = core::cmp::min(split * chunk, n);
    let len = core::cmp::min(start + chunk, n) - start;
    let tid = thread_idx_x() as usize;
    let mut i = tid;
    while i < len {
        *xs.add(i) = *x.add(start + i);
        i += B;
    }
    sync_threads();
    let r0 = group * rows;
    let count = core::cmp::min(r0 + rows, m) - r0;
    let (w, lane) = (tid / WARP_SIZE as usize, tid % WARP_SIZE as usize);
    for k in 0..count {
        let s = row_chunk(a.add((r0 + k) * lda + start), xs, len, tid);
        if lane == 0 {
            *warp_sums.add(k * WARPS + w) = s;
        }
    }
    sync_threads();
    let mine = tid < count;
    let mut sum = 0.0f32;
    if mine {
        for v in 0..WARPS {
            sum += *warp_sums.add(tid * WARPS + v);
        }
    }
    if splits == 1 {
        if mine {
            g.store(r0 + tid, sum);
        }
        return;
    }
    if mine {
        write_volatile(partials.add((r0 + tid) * splits + split), sum);
    }
    fence_acq_rel_gpu();
    sync_threads();
    if mine {
        *last.add(tid) = tile_fold::take_ticket(counters.add(r0 + tid), splits as u32) as u32;
    }
    sync_threads();
    for k in 0..count {
        if *last.add(k) != 0 {
            fence_acq_rel_gpu();
            let total = block::reduce_array::<Sum<f32>>(partials.add((r0 + k) * splits), splits);
            if tid == 0 {
                g.store(r0 + k, total);
            }
        }
    }
}
