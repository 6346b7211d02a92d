//! Strided-batched gemv, Op::T (y = Aᵀx, n outputs), with 16-byte loads of A: each thread owns
//! eight consecutive columns and walks rows, `ROWS` rows' loads in flight; the rows split across
//! blocks when (problems × column tiles) would not fill the device, the splits folded in split
//! order by the tile's last block (`tile_fold`), so the result does not depend on timing.
//!
//! # Safety
//! As [`super::batched`]'s, and: n a multiple of 8; A's base address, `lda` and `stride_a` (in
//! bytes of A's type) multiples of 16; blocks of `SGEMV_BATCHED_BLOCK` threads; `lanes` a power
//! of two with 8 · lanes ≤ the block (a thread per column of the tile to fold), so at most a
//! warp (a warp holds whole row groups for the butterfly); grid = batch · ⌈n / (8 · lanes)⌉ · ⌈m / rows_per_split⌉ blocks;
//! with more than one split, `partials` holds splits · batch · n floats and `counters` one zeroed
//! u32 per (problem, column tile) (left zeroed); with one, neither is touched.
//!
//! # Thread mapping
//! Block b is (problem, column tile, split), split fastest. Thread t is lane t % lanes of row
//! group t / lanes: it owns columns tile · 8 · lanes + 8 · (t % lanes) … + 7 and walks the
//! split's rows group, group + groups, … (groups = block / lanes). The row groups of a warp then
//! fold by butterfly (`shfl.sync.bfly` at steps lanes, 2 · lanes, … 16), and through shared
//! memory thread t < 8 · lanes folds column t of the tile over the block's warps in warp order
//! and stores its y, or its split's partial; the tile's last block folds column t over the
//! splits. Eight adds a column after the shuffles, at any threads per row.
use super::batched::{Batched, GemvElement};
use super::tile_fold;
use super::vector_batched::Vector8;
use crate::block::sync_threads;
use crate::config::{SGEMV_BATCHED_BLOCK, SGEMV_BATCHED_ROWS, WARP_SIZE};
use crate::shuffle::Shuffle;
use crate::shared::shared_array;
use crate::thread::{block_index, issue_loads_together};
use core::ptr::{read_volatile, write_volatile};
use cuda_std::thread::thread_idx_x;

const ROWS: usize = SGEMV_BATCHED_ROWS;
const VECTOR: usize = 8;
const BLOCK: usize = SGEMV_BATCHED_BLOCK as usize;
const WARP: usize = WARP_SIZE as usize;

/// Op::T: y_b = alpha · A_bᵀ x_b + beta · y_b for every problem b.
pub unsafe fn columns<A: Vector8, X: GemvElement, Y: GemvElement>(
    g: Batched<A, X, Y>,
    lanes: usize,
    rows_per_split: usize,
    partials: *mut f32,
    counters: *mut u32,
) {
    let Batched { a, x, m, n, lda, incx, incy, stride_a, stride_x, stride_y, batch, .. } = g;
    let sums = shared_array!(SHARED_VECTOR_T_SUMS: [f32; BLOCK * VECTOR]);
    let tiles = (n + VECTOR * lanes - 1) / (VECTOR * lanes);
    let splits = core::cmp::max((m + rows_per_split - 1) / rows_per_split, 1);
    let b = block_index();
    let (problem, tile, split) = (b / (tiles * splits), (b / splits) % tiles, b % splits);
    let tid = thread_idx_x() as usize;
    let (group, groups) = (tid / lanes, BLOCK / lanes);
    let col = tile * VECTOR * lanes + (tid % lanes) * VECTOR;
    // A thread past n reads the tile's first columns (valid addresses); its sums are not stored.
    let a_b = a.add(problem * stride_a + if col < n { col } else { tile * VECTOR * lanes });
    let x_b = x.add(problem * stride_x);
    let r1 = core::cmp::min((split + 1) * rows_per_split, m);
    let mut acc = [0.0f32; VECTOR];
    let mut r = split * rows_per_split + group;
    while r + (ROWS - 1) * groups < r1 {
        let mut raw = [A::ZERO; ROWS];
        for k in 0..ROWS {
            raw[k] = A::load_raw(a_b.add((r + k * groups) * lda));
        }
        let mut xv = [0.0f32; ROWS];
        for k in 0..ROWS {
            xv[k] = (*x_b.add((r + k * groups) * incx)).to_f32();
        }
        // The pass's loads all out before the first product waits (ptxas issued two of A's
        // four before). Halves only: f32's eight took 80 registers instead of 62 (three blocks
        // a SM instead of four) and its 512- and 4,096-row shapes went 2-9% slower.
        if A::ONE_LOAD {
            issue_loads_together();
        }
        for k in 0..ROWS {
            let av = A::widen8(raw[k]);
            for j in 0..VECTOR {
                acc[j] += av[j] * xv[k];
            }
        }
        r += ROWS * groups;
    }
    while r < r1 {
        let (av, xv) = (A::load8(a_b.add(r * lda)), (*x_b.add(r * incx)).to_f32());
        for j in 0..VECTOR {
            acc[j] += av[j] * xv;
        }
        r += groups;
    }
    // The warp's row groups fold by butterfly (steps of lanes and up meet the lanes of the same
    // columns); lanes 0 .. lanes of warp w then hold its sums for the tile's columns, stored at
    // w · 8 · lanes …, column order.
    let mut step = lanes;
    while step < WARP {
        for j in 0..VECTOR {
            acc[j] += acc[j].shfl_xor(step as u32);
        }
        step *= 2;
    }
    let (warp, lane) = (tid / WARP, tid % WARP);
    if lane < lanes {
        for j in 0..VECTOR {
            *sums.add((warp * lanes + lane) * VECTOR + j) = acc[j];
        }
    }
    sync_threads();
    // Thread t < 8 · lanes folds column t of the tile over the warps, in warp order.
    let width = VECTOR * lanes;
    let c = tile * width + tid;
    let (mine, out) = (tid < width && c < n, problem * n + c);
    let mut total = 0.0f32;
    if mine {
        for w in 0..BLOCK / WARP {
            total += *sums.add(w * width + tid);
        }
    }
    let store = |total: f32| g.store(problem * stride_y + c * incy, total);
    if splits == 1 {
        if mine {
            store(total);
        }
        return;
    }
    if mine {
        write_volatile(partials.add(split * batch * n + out), total);
    }
    if tile_fold::last_of_tile(counters.add(problem * tiles + tile), splits as u32) && mine {
        let mut folded = 0.0f32;
        for s in 0..splits {
            folded += read_volatile(partials.add(s * batch * n + out));
        }
        store(folded);
    }
}
